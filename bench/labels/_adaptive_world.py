"""Simulated releases for the adaptive labelled interval, in NumPy alone.

Both the bench (in the project's environment) and the PPI++ reference (in an
environment of its own, with `ppi_python`) import this module and draw the same
releases from the same seeds, so neither has to ship the other 10,000 verdicts per
release. The bench checks that both saw the same runs (each run's mean truth and
judge mean) before it compares their intervals.

A release has N = 10,000 cases: a truth for each (pass/fail at a pass rate of 0.7,
or a score from Beta(4, 2)), a judge's verdict for each, and the review queue's
first 1,000 uniform draws with replacement; n labels are the first n draws.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float64]
Judge = Callable[[Array, np.random.Generator], Array]

SEED = 20_261_207
CASES = 10_000
LABELS = (10, 30, 100, 300, 1_000)
CHUNK = 250
"""Releases simulated at once: 250 x 10,000 cases is 20 MB an array."""
PASS_RATE = 0.7
SCORE_SHAPE = (4.0, 2.0)


def flipping(false_pass: float, false_fail: float) -> Judge:
    def judge(truth: Array, rng: np.random.Generator) -> Array:
        u = rng.random(truth.shape)
        return np.where(truth > 0.5, u >= false_fail, u < false_pass).astype(np.float64)

    return judge


def noisy(bias: float, sd: float) -> Judge:
    def judge(truth: Array, rng: np.random.Generator) -> Array:
        return np.clip(truth + bias + rng.normal(0.0, sd, truth.shape), 0.0, 1.0)

    return judge


def pass_coin(truth: Array, rng: np.random.Generator) -> Array:
    return (rng.random(truth.shape) < 0.5).astype(np.float64)


def score_coin(truth: Array, rng: np.random.Generator) -> Array:
    return rng.random(truth.shape)


PASS_FAIL_JUDGES: dict[str, Judge] = {
    "informative (agrees 90 %)": flipping(0.10, 0.10),
    "middling (agrees 70 %)": flipping(0.30, 0.30),
    "a coin (agrees 50 %)": pass_coin,
    "biased (passes 30 % of failures, fails 5 % of passes)": flipping(0.30, 0.05),
}
SCORE_JUDGES: dict[str, Judge] = {
    "informative (truth + N(0, 0.1))": noisy(0.0, 0.1),
    "middling (truth + N(0, 0.3))": noisy(0.0, 0.3),
    "a coin (uniform, independent)": score_coin,
    "biased (truth + 0.15 + N(0, 0.1))": noisy(0.15, 0.1),
}
KINDS: dict[str, dict[str, Judge]] = {"pass_fail": PASS_FAIL_JUDGES, "score": SCORE_JUDGES}


@dataclass(frozen=True)
class Releases:
    """A chunk of simulated releases: one row each."""

    run_mean: Array
    """Each release's mean truth over its N cases: what the labelled interval covers."""
    slope: Array
    """Each release's slope of truth on verdict over its N cases, clipped to [0, 1]: the
    lean PPI++ would take with every case labelled."""
    verdicts: Array
    """Every case's verdict, (rows, N)."""
    index: npt.NDArray[np.int64]
    """The case of each of the queue's first draws, (rows, max(LABELS))."""
    drawn_truth: Array
    """The people's value of each draw."""
    drawn_verdicts: Array


def _truth(kind: str, rng: np.random.Generator, rows: int) -> Array:
    if kind == "pass_fail":
        return (rng.random((rows, CASES)) < PASS_RATE).astype(np.float64)
    return rng.beta(*SCORE_SHAPE, (rows, CASES))


def _slope(truth: Array, verdicts: Array) -> Array:
    centred = verdicts - verdicts.mean(axis=1, keepdims=True)
    spread = np.maximum((centred * centred).sum(axis=1), 1e-12)
    return np.clip((centred * truth).sum(axis=1) / spread, 0.0, 1.0)


def releases(kind: str, judge_name: str, sims: int) -> Iterator[Releases]:
    """`sims` releases of the cell, `CHUNK` at a time, from the cell's own seed."""
    judges = KINDS[kind]
    cell = (list(KINDS).index(kind), list(judges).index(judge_name))
    rng = np.random.default_rng([SEED, *cell])
    judge = judges[judge_name]
    for start in range(0, sims, CHUNK):
        rows = min(CHUNK, sims - start)
        truth = _truth(kind, rng, rows)
        verdicts = judge(truth, rng)
        index = rng.integers(0, CASES, (rows, max(LABELS)))
        picked = np.arange(rows)[:, None]
        yield Releases(
            run_mean=truth.mean(axis=1),
            slope=_slope(truth, verdicts),
            verdicts=verdicts,
            index=index,
            drawn_truth=truth[picked, index],
            drawn_verdicts=verdicts[picked, index],
        )
