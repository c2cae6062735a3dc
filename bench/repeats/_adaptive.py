"""Adaptive repeats on the release figure: more tries for the cases still uncertain.

The plan measured: every case runs twice; a case whose two tries disagree (flaky for
sure) runs `EXTRA` more times, a case whose two agree stops. Calls per case: 2 plus
`EXTRA` times the share of disagreeing cases. Two ways to read it, each with the
engine's betting interval over the per-case values (`stats.bounded_mean_bounds` with
the case ids' order, as in `_coverage`):

- "all tries": each case's mean over all its tries. The stopping depends on the tries
  themselves, so this is biased: a flaky case that happened to agree is read as always
  passing or always failing, one that disagreed as its long-run rate;
- "unbiased": the unbiased estimator of each case's pass chance under this plan
  (Girshick, Mosteller & Savage 1946: the share of the paths to the case's end point
  whose first step is a pass). For a case that disagreed it is 1/2 whatever its extra
  tries show, for one that agreed its two tries' mean: exactly the mean of the first two
  tries, so the extra tries cannot narrow an unbiased release figure under this plan.

Both against uniform k = 2 and k = 5 on the same populations.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench.repeats._coverage import FloatArray, betting_bounds, case_ids, release_bounds, summary
from bench.repeats._population import Population
from oloproof_core.stats._order import ReadOrder

EXTRA = 8


def _first_two_and_extra(
    population: Population, rng: np.random.Generator, reps: int, n: int
) -> tuple[FloatArray, FloatArray, FloatArray]:
    kind = rng.random((reps, n))
    p = rng.beta(population.a, population.b, (reps, n))
    p = np.where(kind < population.always_pass, 1.0, p)
    p = np.where(kind >= 1.0 - population.always_fail, 0.0, p)
    first_two = rng.binomial(2, p).astype(np.float64)
    extra = rng.binomial(EXTRA, p).astype(np.float64)
    return first_two, extra, p


def adaptive_rows(population: Population, n: int, reps: int, seed: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    first_two, extra, _ = _first_two_and_extra(population, rng, reps, n)
    disagree = first_two == 1.0
    order = ReadOrder.of(case_ids(n))
    truth = population.pass_rate()
    calls = 2.0 + EXTRA * disagree.mean()
    all_tries = np.where(disagree, (first_two + extra) / (2 + EXTRA), first_two / 2)
    head = {"population": population.name, "cases": n, "releases": reps}
    rows = [
        {**head, "plan": "adaptive, all tries", "calls_per_case": calls,
         **summary(betting_bounds(all_tries, order), truth),
         "mean_estimate": float(all_tries.mean())},
        {**head, "plan": "adaptive, unbiased", "calls_per_case": calls,
         **summary(betting_bounds(first_two / 2, order), truth),
         "mean_estimate": float((first_two / 2).mean())},
    ]  # fmt: skip
    for k in (2, 5):
        passes = population.passes(rng, reps, n, k)
        rows.append(
            {**head, "plan": f"uniform k = {k}", "calls_per_case": float(k),
             **summary(release_bounds(passes, k, order), truth),
             "mean_estimate": float((passes / k).mean())}
        )  # fmt: skip
    return rows
