"""Cases an anytime-valid (sequential) rule needs to pass with a stated power, by simulation.

A sequential gate reads the betting confidence sequence of ``_sequential``, with
the bets tuned to the horizon ``N`` (the cases available). Its lower end never
moves down between looks (the capital is a running maximum), so a ``min`` rule
passes at some look up to ``N`` exactly when ``max_{t <= N} K_t^+(threshold)``
reaches ``2 / alpha``; how often the gate looks does not change *whether* it
passes by ``N``, only how early it stops. The power at ``N`` is therefore the
probability of that event under a truth beyond the threshold, and the plan is the
smallest ``N`` that reaches it.

Why a simulation and not the fixed-size formulas: a sequential pass/fail rule
reads the betting sequence, not the exact Clopper–Pearson interval, and needs
more cases than the exact rule's plan; the betting formula of ``_power`` is
asymptotic and a few points optimistic at a few hundred cases. The simulation
runs the gate's own capital (the same bets, truncation and prior), so it is
exact up to Monte Carlo error (``REPS`` runs per size: a standard error of about
0.009 at 80 % power, a per cent or two of the cases).

The truth is a distribution on ``[0, 1]`` with the planned mean and spread:

- ``two-point``: values 0 and 1 (pass/fail; also any spread at or above the
  largest possible, ``mean * (1 - mean)``);
- ``three-point``: values 0, 1/2 and 1 (paired pass/fail differences mapped onto
  ``[0, 1]``), the share of discordant pairs set by the spread;
- ``continuous``: the Beta distribution with that mean and spread (scores and
  paired score differences).

Determinism: the random draws are seeded from a digest of the inputs, and every
size is simulated on the same draws (common random numbers, a prefix per size),
so the same question always gets the same answer and the power grows with ``N``
without simulation noise between neighbouring sizes. A process therefore simulates
each question once, up to a second or so of it: a gate's decision, its report and a
page showing the plan all read the same answer. Beyond ``SIMULATED_UP_TO``
cases the betting formula of ``_power`` is used, which the simulation approaches
there (bench/README.md).
"""

from __future__ import annotations

import functools
import hashlib
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from ._bounded_mean import SCORE_TUNING, BetTuning, plug_in_bets
from ._power import POWER, betting_cases_for_power, proportion_cases_for_power
from ._validate import check_confidence

__all__ = ["REPS", "SIMULATED_UP_TO", "SequentialPlan", "sequential_cases_for_power"]

FloatArray = npt.NDArray[np.float64]
Support = Literal["two-point", "three-point", "continuous"]

REPS = 2000
SIMULATED_UP_TO = 5_000
"""Largest fixed-size betting plan that is simulated; beyond it the formula is used."""
_HEADROOM = 2
_VALUES = 10_000_000
_ROWS_PER_BLOCK = 200


@dataclass(frozen=True, slots=True)
class SequentialPlan:
    """The horizon ``cases`` for ``power``, and the average number of cases actually run."""

    cases: int | None
    mean_cases_run: float | None
    simulated: bool


def _seed(*parts: object) -> int:
    text = "|".join(f"{part:.12g}" if isinstance(part, float) else str(part) for part in parts)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def _draw(
    rng: np.random.Generator, support: Support, mean: float, sd: float, shape: tuple[int, int]
) -> FloatArray:
    """Values with the planned mean and spread, shape (cases, runs): a prefix per size.

    Stored as float32 (a few million values); the capital is computed in float64.
    """
    variance = sd * sd
    largest = mean * (1.0 - mean)
    if support == "two-point" or variance >= largest or largest == 0.0:
        return (rng.random(shape) < mean).astype(np.float32)
    if support == "three-point":
        shift = 2.0 * mean - 1.0
        discordant = min(1.0, max(abs(shift), 4.0 * variance + shift * shift))
        up = (discordant + shift) / 2.0
        u = rng.random(shape)
        result: FloatArray = np.where(u < up, 1.0, np.where(u < discordant, 0.0, 0.5))
        return result.astype(np.float32)
    strength = max(largest / max(variance, 1e-12) - 1.0, 1e-9)
    beta: FloatArray = rng.beta(mean * strength, (1.0 - mean) * strength, shape)
    return beta.astype(np.float32)


class _Simulation:
    """The gate's capital at the threshold on fixed draws, evaluated for any horizon."""

    def __init__(
        self, draws: FloatArray, threshold: float, level: float, tuning: BetTuning
    ) -> None:
        self.runs = draws.T  # (runs, cases): the first N columns are the first N cases
        self.threshold = threshold
        self.alpha = 1.0 - level
        self.tuning = tuning
        self.bar = math.log(2.0 / self.alpha)

    def crossing(self, horizon: int) -> npt.NDArray[np.int64]:
        """Per run: the first case count at which the rule passes (``horizon + 1``: never)."""
        out = np.empty(self.runs.shape[0], dtype=np.int64)
        for start in range(0, self.runs.shape[0], _ROWS_PER_BLOCK):
            x = self.runs[start : start + _ROWS_PER_BLOCK, :horizon].astype(np.float64)
            bets = plug_in_bets(x, self.alpha, horizon, self.tuning)
            cap = self.tuning.truncation / self.threshold if self.threshold > 0 else np.inf
            log_capital = np.cumsum(np.log1p(np.minimum(bets, cap) * (x - self.threshold)), axis=1)
            above = log_capital >= self.bar
            first = np.argmax(above, axis=1) + 1
            out[start : start + x.shape[0]] = np.where(above.any(axis=1), first, horizon + 1)
        return out

    def power(self, horizon: int) -> float:
        return float(np.mean(self.crossing(horizon) <= horizon))


def _search(simulation: _Simulation, guess: int, power: float, limit: int) -> int | None:
    """Smallest horizon up to ``limit`` whose simulated power reaches ``power``.

    Bracketed by doubling from ``guess``, then bisected to half a per cent.
    """
    low, high = 0, max(2, min(guess, limit))
    while simulation.power(high) < power:
        if high >= limit:
            return None
        low, high = high, min(limit, 2 * high)
    while high - low > max(1, high // 200):
        middle = (low + high) // 2
        if simulation.power(middle) >= power:
            high = middle
        else:
            low = middle
    return high


def _mean_cases_run(simulation: _Simulation, horizon: int, batch: int) -> float:
    """Average cases run when the gate looks every ``batch`` cases and stops on a pass."""
    first = simulation.crossing(horizon)
    looks = np.minimum(horizon, batch * np.ceil(first / batch))
    return float(np.mean(np.where(first <= horizon, looks, horizon)))


@functools.lru_cache(maxsize=256)
def sequential_cases_for_power(
    mean: float,
    threshold: float,
    sd: float,
    *,
    support: Support,
    side: Literal["min", "max"] = "min",
    batch: int = 50,
    confidence: float = 0.95,
    power: float = POWER,
    tuning: BetTuning = SCORE_TUNING,
) -> SequentialPlan:
    """Horizon with which a sequential rule on ``[0, 1]`` passes with ``power`` (module docstring).

    ``mean`` is the planned truth and ``threshold`` the rule's, both on ``[0, 1]``;
    ``sd`` the spread of one value there. ``side="min"``: the lower end must clear
    the threshold; ``"max"``: the upper end must stay below it. ``batch`` only sets
    the average number of cases run (``mean_cases_run``, counting every run that
    does not pass as running to the end). ``cases`` is None when the truth is not
    beyond the threshold, or when no size reaches the power (up to ten million by
    the formula, up to ``2 * SIMULATED_UP_TO`` in the simulation).
    """
    level = check_confidence(confidence)
    if side == "max":
        mean, threshold = 1.0 - mean, 1.0 - threshold
    if not 0.0 <= threshold < mean <= 1.0:
        return SequentialPlan(None, None, False)
    guess = betting_cases_for_power(sd, mean - threshold, level, power)
    if support == "two-point":
        # The exact interval's plan is a floor for the (wider) betting sequence, and
        # much closer than the formula near rates of 0 or 1.
        exact = proportion_cases_for_power(mean, threshold, level, power)
        guess = max(guess or 0, exact or 0) or None
    if guess is None or guess > SIMULATED_UP_TO:
        return SequentialPlan(guess, None, False)
    seed = _seed(support, mean, threshold, sd, level, power, tuning.truncation, tuning.prior_weight)
    columns = _HEADROOM * guess + 64
    while True:
        # Fewer runs for long horizons keep the draws to about ten million values.
        runs = min(REPS, max(500, _VALUES // columns))
        draws = _draw(np.random.default_rng(seed), support, mean, sd, (columns, runs))
        simulation = _Simulation(draws, threshold, level, tuning)
        cases = _search(simulation, guess, power, columns)
        if cases is not None:
            return SequentialPlan(cases, _mean_cases_run(simulation, cases, max(1, batch)), True)
        if columns >= _HEADROOM * SIMULATED_UP_TO:
            return SequentialPlan(None, None, True)
        guess, columns = columns, min(2 * columns, _HEADROOM * SIMULATED_UP_TO)
