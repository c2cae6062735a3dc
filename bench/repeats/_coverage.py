"""Coverage and width of a repeated run's intervals, against Inspect AI's epochs reducer.

Each release: n cases drawn from a population, each run k times. Its figures, as the
engine gives them:

- the release figure, the mean of case means: with k > 1 each case's repeats share a
  cluster and the interval is the betting interval on cluster means (equal cluster
  sizes make it the betting interval on the case means, read in the order of the
  cases' ids: `bounded_mean_bounds` with those keys); with k = 1 the run has no
  clusters and a pass/fail metric gets the exact Clopper–Pearson interval;
- pass@k and pass^k: each case's unbiased value (`stats.pass_at_k`, `stats.pass_all_k`,
  called for every count of passes), their mean over cases with the betting interval
  (`stats.mean_interval`, here `bounded_mean_bounds` with the same keys for all
  releases at once).

For the first `CHECKED` releases of every cell the vectorised ends are checked against
the engine's own per-run paths (`estimate_metric` on the repeats' verdicts with their
clusters, `stats.mean_interval` on the per-case values): they must agree to 1e-9.

Inspect AI's epochs reducer ("mean"): each sample's mean over its epochs, then the
mean over samples with its standard error `std(ddof=1) / sqrt(n)` (inspect_ai
`scorer/_metrics/std.py`, `stderr`), read as mean ± 1.96 SE; the same normal interval
on the per-case pass@k (Inspect's `pass_at_k` reducer) and pass^k values. Widths of
both are measured after clipping to [0, 1].
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import numpy.typing as npt

from bench.repeats._population import IntArray, Population
from oloproof_core import stats
from oloproof_core.evaluation.aggregate import estimate_metric
from oloproof_core.stats._order import ReadOrder

FloatArray = npt.NDArray[np.float64]
LEVEL = 0.95
CHECKED = 100
Z = 1.959963984540054
_BATCH_VALUES = 4_000_000


def case_ids(n: int) -> list[str]:
    return [f"case{i}" for i in range(n)]


def betting_bounds(values: FloatArray, order: ReadOrder) -> FloatArray:
    """The engine's betting interval for each row, read in the cases' order, in batches."""
    rows = max(1, _BATCH_VALUES // values.shape[1])
    parts = [
        stats.bounded_mean_bounds(values[i : i + rows], LEVEL, keys=order)
        for i in range(0, values.shape[0], rows)
    ]
    return np.vstack(parts)


def release_bounds(passes: IntArray, k: int, order: ReadOrder) -> FloatArray:
    """The release figure's interval (the mean of case means) for each release."""
    n = passes.shape[1]
    if k == 1:
        table = np.array([_ends(stats.clopper_pearson(c, n, LEVEL)) for c in range(n + 1)])
        return table[passes.sum(axis=1)]
    means = passes / k
    bounds = betting_bounds(means, order)
    centre = means.mean(axis=1)
    # As `estimate_metric` does: the interval widened, if needed, to hold the estimate.
    return np.column_stack((np.minimum(bounds[:, 0], centre), np.maximum(bounds[:, 1], centre)))


def per_case_values(passes: IntArray, k: int, figure: str) -> FloatArray:
    """Each case's pass@k or pass^k from its k tries, by the engine's estimators."""
    estimator = stats.pass_at_k if figure == "pass@k" else stats.pass_all_k
    table = np.array([estimator(k, c, k) for c in range(k + 1)])
    result: FloatArray = table[passes]
    return result


def inspect_bounds(values: FloatArray) -> FloatArray:
    """Mean ± 1.96 standard errors (ddof = 1) over the rows' per-case values."""
    mean = values.mean(axis=1)
    se = values.std(axis=1, ddof=1) / np.sqrt(values.shape[1])
    return np.column_stack((mean - Z * se, mean + Z * se))


def check_release(passes: IntArray, k: int, bounds: FloatArray) -> float:
    """The largest gap to `estimate_metric` over the repeats' verdicts, first releases."""
    ids = case_ids(passes.shape[1])
    clusters = None if k == 1 else [case for case in ids for _ in range(k)]
    keys = ids if k == 1 else [f"{case}#r{j}" for case in ids for j in range(1, k + 1)]
    gap = 0.0
    for row, found in zip(passes[:CHECKED], bounds[:CHECKED], strict=False):
        values = [float(j < c) for c in row.tolist() for j in range(k)]
        metric = estimate_metric(
            "m", "m", values, "pass_fail", (0.0, 1.0), LEVEL, clusters, keys=keys
        )
        gap = max(gap, abs(metric.interval.lower - found[0]), abs(metric.interval.upper - found[1]))
    return gap


def check_per_case(values: FloatArray, bounds: FloatArray, ids: list[str]) -> float:
    """The largest gap to `stats.mean_interval` (what `repeat_figures` calls)."""
    gap = 0.0
    for row, found in zip(values[:CHECKED], bounds[:CHECKED], strict=False):
        interval = stats.mean_interval(row, 0, 0.0, 1.0, LEVEL, keys=ids)
        gap = max(gap, abs(interval.lower - found[0]), abs(interval.upper - found[1]))
    return gap


def summary(bounds: FloatArray, truth: float) -> dict[str, float]:
    lower, upper = bounds[:, 0], bounds[:, 1]
    width = np.clip(upper, 0.0, 1.0) - np.clip(lower, 0.0, 1.0)
    return {
        "coverage": float(np.mean((lower <= truth) & (truth <= upper))),
        "miss_low": float(np.mean(upper < truth)),
        "miss_high": float(np.mean(lower > truth)),
        "mean_width": float(width.mean()),
    }


def cell(population: Population, n: int, k: int, reps: int, seed: int) -> list[dict[str, Any]]:
    """Every figure's row for `reps` releases of n cases, k repeats each."""
    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    passes = population.passes(rng, reps, n, k)
    ids = case_ids(n)
    order = ReadOrder.of(ids)
    head = {"population": population.name, "cases": n, "k": k, "releases": reps}
    rows = []
    release = release_bounds(passes, k, order)
    rows.append(
        {
            **head,
            "figure": "mean of case means",
            "truth": population.pass_rate(),
            "engine": summary(release, population.pass_rate()),
            "inspect": summary(inspect_bounds(passes / k), population.pass_rate()),
            "checked_gap": check_release(passes, k, release),
        }
    )
    if k > 1:
        for figure, truth in (
            ("pass@k", population.pass_at_k(k)),
            ("pass^k", population.pass_all_k(k)),
        ):
            values = per_case_values(passes, k, figure)
            engine = betting_bounds(values, order)
            rows.append(
                {
                    **head,
                    "figure": figure,
                    "truth": truth,
                    "engine": summary(engine, truth),
                    "inspect": summary(inspect_bounds(values), truth),
                    "checked_gap": check_per_case(values, engine, ids),
                }
            )
    for row in rows:
        row["seconds"] = round(time.perf_counter() - started, 1)
    return rows


def _ends(interval: stats.Interval) -> tuple[float, float]:
    return interval.lower, interval.upper
