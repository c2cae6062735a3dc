"""Comparing two releases run at different repeat counts: the paired interval on case
means (`oloproof_core/results/compare/_case_means.py`), its coverage and width.

Each release pair shares its n cases, drawn from a population (`_population`): case i
passes one try of the baseline with chance p_i, and of the candidate with q_i. Either
nothing changed (q = p), or a tenth of the cases regressed (q = p / 2 there, chosen at
random). The baseline runs each case k_a times and the candidate k_b times; the
difference is the mean over cases of (the candidate's case mean − the baseline's), and
its truth the population's E[q − p] (0, or −0.05 × the pass rate).

The engine pairs the case means as bounded differences: the betting interval of
`paired_mean_difference` on (d + 1) / 2, read in the order of the cases' ids. Here it is
computed for all releases of a cell at once (`stats.bounded_mean_bounds` with the
differences' tuning); for the first `CHECKED` releases of every cell the engine's own
`paired_figures`, as `compare_case_means` calls it, must give the same ends to 1e-9.

Against it: the normal interval on the same differences (mean ± 1.96 standard errors),
what an epochs reducer's standard error gives when the two runs' case means are paired.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import numpy.typing as npt

from bench.repeats._coverage import case_ids
from bench.repeats._population import Population
from oloproof_core import stats
from oloproof_core.results.compare._paired import paired_figures
from oloproof_core.stats import DIFFERENCE_TUNING
from oloproof_core.stats._order import ReadOrder

FloatArray = npt.NDArray[np.float64]
LEVEL = 0.95
CHECKED = 50
Z = 1.959963984540054
REGRESSED_SHARE = 0.1
COUNTS = ((1, 5), (3, 5), (2, 10))


def compare_counts_cell(
    population: Population, n: int, counts: tuple[int, int], regressed: bool, reps: int, seed: int
) -> dict[str, Any]:
    """Coverage and mean width of the engine's and the normal interval for one cell."""
    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    p = pass_chances(population, rng, reps, n)
    q = p.copy()
    if regressed:
        q = np.where(rng.random((reps, n)) < REGRESSED_SHARE, p / 2.0, p)
    k_a, k_b = counts
    before = rng.binomial(k_a, p) / k_a
    after = rng.binomial(k_b, q) / k_b
    differences = after - before
    truth = -REGRESSED_SHARE * population.pass_rate() / 2.0 if regressed else 0.0
    order = ReadOrder.of(case_ids(n))
    units = stats.bounded_mean_bounds(
        (differences + 1.0) / 2.0, LEVEL, tuning=DIFFERENCE_TUNING, keys=order
    )
    engine = np.clip(2.0 * units - 1.0, -1.0, 1.0)
    _check(before, after, engine, order)
    centre = differences.mean(axis=1)
    spread = Z * differences.std(axis=1, ddof=1) / np.sqrt(n)
    normal = np.column_stack((centre - spread, centre + spread))
    return {
        "population": population.name,
        "cases": n,
        "repeats": f"{k_a} → {k_b}",
        "release": "a tenth regressed" if regressed else "unchanged",
        "truth": round(truth, 4),
        "engine": _covered(engine, truth),
        "normal": _covered(normal, truth),
        "seconds": round(time.perf_counter() - started, 1),
    }


def pass_chances(population: Population, rng: np.random.Generator, reps: int, n: int) -> FloatArray:
    kind = rng.random((reps, n))
    p = rng.beta(population.a, population.b, (reps, n))
    p = np.where(kind < population.always_pass, 1.0, p)
    chances: FloatArray = np.where(kind >= 1.0 - population.always_fail, 0.0, p)
    return chances


def _check(before: FloatArray, after: FloatArray, engine: FloatArray, order: ReadOrder) -> None:
    for row in range(min(CHECKED, before.shape[0])):
        figures = paired_figures(
            before[row], after[row], pass_fail=False, low=0.0, high=1.0, confidence=LEVEL,
            keys=order,
        )  # fmt: skip
        found = (figures.interval.lower, figures.interval.upper)
        if not np.allclose(found, engine[row], atol=1e-9):
            raise AssertionError(f"release {row}: engine {found}, vectorised {engine[row]}")


def _covered(bounds: FloatArray, truth: float) -> dict[str, float]:
    inside = (bounds[:, 0] <= truth) & (truth <= bounds[:, 1])
    coverage = float(inside.mean())
    return {
        "coverage": round(coverage, 4),
        "se": round(float(np.sqrt(coverage * (1 - coverage) / bounds.shape[0])), 4),
        "mean_width": round(float((bounds[:, 1] - bounds[:, 0]).mean()), 4),
    }
