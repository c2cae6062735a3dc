"""`repeats: auto` on the release figure: one try for the cases earlier runs found stable,
`AUTO_MOST` for the rest, against uniform k = 5 and k = 2 on the same releases.

Each release: n cases drawn from a population (`_population`), case i passing one try
with chance p_i. The earlier run tries every case `AUTO_MOST` times (what the first
auto run does, having no evidence); a case whose tries all agreed is stable and
`allocate` gives it one try in the auto run of the same release, every other case
`AUTO_MOST`. Two variants:

- "unchanged": the auto run's cases pass with the same p_i (flakiness persists);
- "release changed": before the auto run, each stable case, with chance `STALE_SHARE`,
  becomes flaky with p ~ Beta(2, 2), so the evidence is stale for those cases.

The auto run's figure is the mean over cases of each case's mean over its own tries,
with the engine's betting interval over the case means, each case weighed once
(`CasesOfTries.estimate`, here `betting_bounds` with the case ids' order for all
releases at once). The same release run uniformly, every case k = 5 or k = 2 times, gets
the engine's interval for a repeated run (`release_bounds`); the tries are shared: a
case's first try is the auto run's one try, its first two uniform k = 2's, all five
uniform k = 5's (and the auto run's for a case tried five times).

The truth is the population's mean chance of passing, as in `_coverage` (for the
changed release, the changed population's, in closed form); coverage of each release's
own mean of p_i is reported too. For the first `CHECKED` releases of every cell the
allocation must be `allocate`'s, and the vectorised ends those of `CasesOfTries.estimate`
on the auto run's tries and of `estimate_metric` on the uniform runs' (to 1e-9).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from bench.repeats._compare_counts import pass_chances
from bench.repeats._coverage import (
    LEVEL,
    FloatArray,
    betting_bounds,
    case_ids,
    check_release,
    release_bounds,
    summary,
)
from bench.repeats._population import IntArray, Population
from oloproof_core.evaluation.auto_repeats import AUTO_MOST, allocate
from oloproof_core.evaluation.case_weighted import CasesOfTries
from oloproof_core.evaluation.repeats import repeat_id
from oloproof_core.stats._order import ReadOrder

BoolArray = npt.NDArray[np.bool_]
STALE_SHARE = 0.1
STALE_A, STALE_B = 2.0, 2.0
VARIANTS = ("unchanged", "release changed")
CHECKED = 20
TOLERANCE = 1e-9
_CHUNK = 2_000
"""Releases drawn at once: bounds the memory at 1,000 cases."""


@dataclass(frozen=True, slots=True)
class Tries:
    """One batch of releases: the earlier run's verdict per case and the auto run's tries."""

    p: FloatArray  # each case's pass chance in the auto run
    earlier: IntArray  # passes in the earlier run's `AUTO_MOST` tries
    stable: BoolArray  # those tries all agreed: one try in the auto run
    first: IntArray  # the auto run's first try of each case (1: passed)
    second: IntArray  # its second
    rest: IntArray  # passes in its further `AUTO_MOST - 2` tries

    def passes(self, k: int) -> IntArray:
        """Passes of each case run uniformly k times (k = 2 or `AUTO_MOST`)."""
        two = self.first + self.second
        return two if k == 2 else two + self.rest

    def auto_means(self) -> FloatArray:
        """Each case's mean over the tries `repeats: auto` makes of it."""
        means: FloatArray = np.where(self.stable, self.first, self.passes(AUTO_MOST) / AUTO_MOST)
        return means

    def calls(self) -> FloatArray:
        """The auto run's calls per case, one figure per release."""
        calls: FloatArray = np.where(self.stable, 1.0, float(AUTO_MOST)).mean(axis=1)
        return calls


def draw(
    population: Population, rng: np.random.Generator, reps: int, n: int, changed: bool
) -> Tries:
    p = pass_chances(population, rng, reps, n)
    earlier = rng.binomial(AUTO_MOST, p).astype(np.int64)
    stable = (earlier == 0) | (earlier == AUTO_MOST)
    if changed:
        stale = stable & (rng.random((reps, n)) < STALE_SHARE)
        p = np.where(stale, rng.beta(STALE_A, STALE_B, (reps, n)), p)
    return Tries(
        p=p,
        earlier=earlier,
        stable=stable,
        first=(rng.random((reps, n)) < p).astype(np.int64),
        second=(rng.random((reps, n)) < p).astype(np.int64),
        rest=rng.binomial(AUTO_MOST - 2, p).astype(np.int64),
    )


def truth(population: Population, changed: bool) -> float:
    """The population's mean chance of passing in the auto run.

    Changed: `STALE_SHARE` of the stable cases moved from p to the stale Beta's mean, so
    the truth moves by that share of E[1{stable} (mean − p)], where a case is stable
    with chance p^5 + (1 − p)^5 (`AUTO_MOST` = 5 tries)."""
    if not changed:
        return population.pass_rate()
    most, all_k, at_k = AUTO_MOST, population.pass_all_k, population.pass_at_k
    stable = all_k(most) + 1.0 - at_k(most)
    pass_and_stable = all_k(most + 1) + at_k(most + 1) - at_k(most)
    return population.pass_rate() + STALE_SHARE * (
        STALE_A / (STALE_A + STALE_B) * stable - pass_and_stable
    )


def bounds_of(tries: Tries, order: ReadOrder) -> dict[str, FloatArray]:
    """Each plan's interval for each release of the batch."""
    return {
        "auto": betting_bounds(tries.auto_means(), order),
        "uniform 5": release_bounds(tries.passes(AUTO_MOST), AUTO_MOST, order),
        "uniform 2": release_bounds(tries.passes(2), 2, order),
    }


def check_allocation(tries: Tries) -> None:
    """The stable cases are those `allocate` tries once, for the first releases."""
    ids = case_ids(tries.p.shape[1])
    for row in range(min(CHECKED, tries.p.shape[0])):
        earlier = {
            case: ["pass"] * passes + ["fail"] * (AUTO_MOST - passes)
            for case, passes in zip(ids, tries.earlier[row].tolist(), strict=True)
        }
        once = np.array([allocate(ids, earlier)[case] == 1 for case in ids])
        if not np.array_equal(once, tries.stable[row]):
            raise AssertionError(f"release {row}: the allocation differs from `allocate`'s")


def check_auto(tries: Tries, bounds: FloatArray) -> float:
    """The largest gap to `CasesOfTries.estimate` over the auto run's tries."""
    ids = case_ids(tries.p.shape[1])
    gap = 0.0
    for row in range(min(CHECKED, tries.p.shape[0])):
        counts = np.where(tries.stable[row], 1, AUTO_MOST).tolist()
        passes = np.where(tries.stable[row], tries.first[row], tries.passes(AUTO_MOST)[row])
        try_ids = [
            repeat_id(case, j) for case, k in zip(ids, counts, strict=True) for j in range(1, k + 1)
        ]
        values = np.array(
            [float(j < c) for c, k in zip(passes.tolist(), counts, strict=True) for j in range(k)]
        )
        clusters = [case for case, k in zip(ids, counts, strict=True) for _ in range(k)]
        found = CasesOfTries(try_ids, clusters).estimate(
            "m", "m", values, "pass_fail", (0.0, 1.0), LEVEL
        )
        ends = (found.interval.lower, found.interval.upper)
        gap = max(gap, abs(ends[0] - bounds[row, 0]), abs(ends[1] - bounds[row, 1]))
    return gap


def _covered(bounds: FloatArray, truths: FloatArray) -> float:
    """Coverage of each release's own truth (its cases' mean chance of passing)."""
    return float(np.mean((bounds[:, 0] <= truths) & (truths <= bounds[:, 1])))


def _width(bounds: FloatArray) -> FloatArray:
    width: FloatArray = np.clip(bounds[:, 1], 0.0, 1.0) - np.clip(bounds[:, 0], 0.0, 1.0)
    return width


def _ratio(bounds: dict[str, FloatArray], plan: str) -> dict[str, float]:
    """Mean width of `plan` over uniform k = 5's, and the standard error of the ratio."""
    ratio = _width(bounds[plan]).mean() / _width(bounds["uniform 5"]).mean()
    per_release = _width(bounds[plan]) / _width(bounds["uniform 5"])
    se = per_release.std(ddof=1) / np.sqrt(per_release.size)
    return {"ratio": round(float(ratio), 4), "se": round(float(se), 4)}


def _run_variant(
    population: Population, n: int, reps: int, seed: int, changed: bool
) -> tuple[dict[str, FloatArray], FloatArray, FloatArray, float]:
    """Every plan's bounds, each release's own truth and auto calls, and the largest gap."""
    rng = np.random.default_rng(seed)
    order = ReadOrder.of(case_ids(n))
    parts: list[dict[str, FloatArray]] = []
    own: list[FloatArray] = []
    calls: list[FloatArray] = []
    gap = 0.0
    for start in range(0, reps, _CHUNK):
        tries = draw(population, rng, min(_CHUNK, reps - start), n, changed)
        bounds = bounds_of(tries, order)
        if start == 0:
            check_allocation(tries)
            gap = check_auto(tries, bounds["auto"])
            for k in (AUTO_MOST, 2):
                found = tries.passes(k)[:CHECKED]
                gap = max(gap, check_release(found, k, bounds[f"uniform {k}"][:CHECKED]))
            if gap > TOLERANCE:
                raise AssertionError(f"vectorised ends differ from the engine's by {gap:.1e}")
        parts.append(bounds)
        own.append(tries.p.mean(axis=1))
        calls.append(tries.calls())
    joined = {plan: np.vstack([part[plan] for part in parts]) for plan in parts[0]}
    return joined, np.concatenate(own), np.concatenate(calls), gap


def auto_rows(population: Population, n: int, reps: int, seed: int) -> list[dict[str, Any]]:
    """One row per variant: coverage, width and calls of auto against uniform k = 5 and 2."""
    rows = []
    for variant in VARIANTS:
        started = time.perf_counter()
        changed = variant != VARIANTS[0]
        bounds, own, calls, gap = _run_variant(population, n, reps, seed, changed)
        target = truth(population, changed)
        rows.append(
            {
                "population": population.name,
                "cases": n,
                "variant": variant,
                "releases": reps,
                "truth": round(target, 4),
                **{plan: summary(found, target) for plan, found in bounds.items()},
                "own_mean_coverage": {plan: _covered(found, own) for plan, found in bounds.items()},
                "auto_width_ratio": _ratio(bounds, "auto"),
                "uniform_2_width_ratio": _ratio(bounds, "uniform 2"),
                "auto_calls_per_case": round(float(calls.mean()), 4),
                "auto_calls_share": round(float(calls.mean()) / AUTO_MOST, 4),
                "checked_gap": gap,
                "seconds": round(time.perf_counter() - started, 1),
            }
        )
    return rows
