"""`repeats: auto` run after run on one unchanged release: does the width settle at
uniform k = 5's once each case's evidence pools over several runs?

Each release: n cases from a population (`_population`), case i passing one try with
chance p_i in every run. Run 1 is the first auto run, every case `AUTO_MOST` tries.
Each later run r is allocated by `allocate`'s rule from the tries of runs
max(1, r − `EVIDENCE_RUNS`) … r − 1 pooled: a case with at least two pooled tries, all
with the same outcome, is tried once, every other case `AUTO_MOST` times. Vectorised:
per case, the pooled count of tries T and of passes C, stable when T ≥ 2 and C is 0 or
T.

At every run, uniform k = 5 on the same release tries each case 5 times afresh; the
tries are shared as in `_auto` (a case tried once by auto gets that run's first try,
one tried five times all five uniform k = 5's). Auto's figure is the mean over cases of
each case's mean over its tries, with the engine's betting interval over the case
means, as in `_auto`; uniform k = 5 gets the engine's interval for a repeated run. The
truth is the population's mean chance of passing, as in `_auto`.

Where the chain settles (`long_run_rows`): the width ratio from the variance of a case's
mean, Var(p) + E[p(1 − p) / t] against Var(p) + E[p(1 − p)] / 5, its square root, with
t each flaky case's tries at run r under the same allocation (simulated for
`FLAKY_CASES` flaky cases; a case that always passes or always fails is tried once from
run 2 on and adds nothing to E[p(1 − p) / t]).

For the first `CHECKED` releases of every cell, at every run, the allocation must be
`allocate`'s on the pooled tries (`merged_tries` of the evidence runs' outcomes), and
the vectorised ends those of `CasesOfTries.estimate` and `estimate_metric` (to 1e-9).
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

import numpy as np

from bench.repeats._auto import (
    CHECKED,
    TOLERANCE,
    BoolArray,
    Tries,
    _covered,
    _ratio,
    check_auto,
)
from bench.repeats._compare_counts import pass_chances
from bench.repeats._coverage import (
    FloatArray,
    betting_bounds,
    case_ids,
    check_release,
    release_bounds,
    summary,
)
from bench.repeats._population import IntArray, Population
from oloproof_core.evaluation.auto_repeats import AUTO_MOST, EVIDENCE_RUNS, allocate, merged_tries
from oloproof_core.stats._order import ReadOrder

RUNS = 6
"""Auto runs of the release: the first (every case `AUTO_MOST` times) and five more."""
LONG_RUNS = (6, 10, 20, 30)
"""Runs at which `long_run_rows` reads the variance formula."""
FLAKY_CASES = 1_000_000
_CHUNK = 2_000
"""Releases drawn at once: bounds the memory at 1,000 cases."""

Window = deque[tuple[IntArray, IntArray]]
"""The evidence runs, oldest first: each case's tries and passes in each."""


def _pooled(window: Window) -> tuple[IntArray, IntArray]:
    """Each case's tries and passes summed over the evidence runs."""
    tried, passed = np.zeros_like(window[0][0]), np.zeros_like(window[0][1])
    for tries, passes in window:
        tried, passed = tried + tries, passed + passes
    return tried, passed


def _stable(window: Window) -> BoolArray:
    """The cases `allocate` tries once: two or more pooled tries, all alike."""
    tried, passed = _pooled(window)
    stable: BoolArray = (tried >= 2) & ((passed == 0) | (passed == tried))
    return stable


def _run(p: FloatArray, stable: BoolArray, pooled: IntArray, rng: np.random.Generator) -> Tries:
    """One auto run: its allocation and the five tries each case has at that run."""
    shape = p.shape
    return Tries(
        p=p,
        earlier=pooled,  # here: the passes pooled over the evidence runs
        stable=stable,
        first=(rng.random(shape) < p).astype(np.int64),
        second=(rng.random(shape) < p).astype(np.int64),
        rest=rng.binomial(AUTO_MOST - 2, p).astype(np.int64),
    )


def _used(tries: Tries) -> tuple[IntArray, IntArray]:
    """The tries and passes the auto run made of each case: what later runs read."""
    counts: IntArray = np.where(tries.stable, 1, AUTO_MOST).astype(np.int64)
    passes: IntArray = np.where(tries.stable, tries.first, tries.passes(AUTO_MOST))
    return counts, passes


def check_chain_allocation(window: Window, stable: BoolArray) -> None:
    """The cases tried once are `allocate`'s on the pooled outcomes, first releases."""
    ids = case_ids(stable.shape[1])
    for row in range(min(CHECKED, stable.shape[0])):
        runs = [
            {
                case: ["pass"] * c + ["fail"] * (t - c)
                for case, t, c in zip(ids, tries[row].tolist(), passes[row].tolist(), strict=True)
            }
            for tries, passes in reversed(window)
        ]
        allocation = allocate(ids, merged_tries(runs))
        once = np.array([allocation[case] == 1 for case in ids])
        if not np.array_equal(once, stable[row]):
            raise AssertionError(f"release {row}: the allocation differs from `allocate`'s")


def _checked(window: Window, tries: Tries, bounds: dict[str, FloatArray]) -> float:
    """Check the allocation and both plans' ends against the engine's; the largest gap."""
    check_chain_allocation(window, tries.stable)
    gap = check_auto(tries, bounds["auto"])
    found = tries.passes(AUTO_MOST)[:CHECKED]
    gap = max(gap, check_release(found, AUTO_MOST, bounds["uniform 5"][:CHECKED]))
    if gap > TOLERANCE:
        raise AssertionError(f"vectorised ends differ from the engine's by {gap:.1e}")
    return gap


def _chunk(
    population: Population, rng: np.random.Generator, reps: int, n: int, check: bool
) -> tuple[list[dict[str, FloatArray]], FloatArray, float]:
    """Runs 2 … `RUNS` of `reps` releases: each run's bounds and calls, the largest gap."""
    order = ReadOrder.of(case_ids(n))
    p = pass_chances(population, rng, reps, n)
    window: Window = deque(maxlen=EVIDENCE_RUNS)
    window.append((np.full((reps, n), AUTO_MOST, np.int64), rng.binomial(AUTO_MOST, p)))
    runs: list[dict[str, FloatArray]] = []
    gap = 0.0
    for _ in range(2, RUNS + 1):
        stable = _stable(window)
        tries = _run(p, stable, _pooled(window)[1], rng)
        bounds = {
            "auto": betting_bounds(tries.auto_means(), order),
            "uniform 5": release_bounds(tries.passes(AUTO_MOST), AUTO_MOST, order),
        }
        if check:
            gap = max(gap, _checked(window, tries, bounds))
        runs.append({**bounds, "calls": tries.calls(), "once": stable.mean(axis=1)})
        window.append(_used(tries))
    return runs, p.mean(axis=1), gap


def chain_rows(population: Population, n: int, reps: int, seed: int) -> list[dict[str, Any]]:
    """One row per auto run 2 … `RUNS`: coverage, width against uniform k = 5, calls."""
    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    parts: list[list[dict[str, FloatArray]]] = []
    own: list[FloatArray] = []
    gap = 0.0
    for start in range(0, reps, _CHUNK):
        runs, own_mean, found = _chunk(population, rng, min(_CHUNK, reps - start), n, start == 0)
        parts.append(runs)
        own.append(own_mean)
        gap = max(gap, found)
    truths = np.concatenate(own)
    target = population.pass_rate()
    rows = []
    for index in range(RUNS - 1):
        joined = {key: np.concatenate([part[index][key] for part in parts]) for key in parts[0][0]}
        bounds = {plan: joined[plan] for plan in ("auto", "uniform 5")}
        calls = float(joined["calls"].mean())
        rows.append(
            {
                "population": population.name,
                "cases": n,
                "variant": "chain, unchanged",
                "run": index + 2,
                "releases": reps,
                "truth": round(target, 4),
                **{plan: summary(found, target) for plan, found in bounds.items()},
                "own_mean_coverage": {plan: _covered(b, truths) for plan, b in bounds.items()},
                "auto_width_ratio": _ratio(bounds, "auto"),
                "auto_calls_per_case": round(calls, 4),
                "auto_calls_share": round(calls / AUTO_MOST, 4),
                "cases_once_share": round(float(joined["once"].mean()), 4),
                "checked_gap": gap,
            }
        )
    for row in rows:
        row["seconds"] = round(time.perf_counter() - started, 1)
    return rows


def long_run_rows(population: Population, seed: int) -> list[dict[str, Any]]:
    """The variance formula's width ratio and calls at each run of `LONG_RUNS`."""
    rng = np.random.default_rng(seed)
    p = rng.beta(population.a, population.b, FLAKY_CASES)
    mean = population.pass_rate()
    a, b, flaky = population.a, population.b, population.flaky
    second_moment = population.always_pass + flaky * a * (a + 1) / ((a + b) * (a + b + 1))
    between = second_moment - mean**2
    uniform = between + flaky * float(np.mean(p * (1 - p))) / AUTO_MOST
    window: Window = deque(maxlen=EVIDENCE_RUNS)
    window.append((np.full(p.shape, AUTO_MOST, np.int64), rng.binomial(AUTO_MOST, p)))
    rows = []
    for run in range(2, max(LONG_RUNS) + 1):
        stable = _stable(window)
        tries = np.where(stable, 1, AUTO_MOST).astype(np.int64)
        if run in LONG_RUNS:
            auto = between + flaky * float(np.mean(p * (1 - p) / tries))
            calls = 1.0 - flaky + flaky * float(tries.mean())
            rows.append(
                {
                    "population": population.name,
                    "variant": "chain, variance formula",
                    "run": run,
                    "auto_width_ratio": round(float(np.sqrt(auto / uniform)), 4),
                    "auto_calls_share": round(calls / AUTO_MOST, 4),
                    "flaky_once_share": round(float(stable.mean()), 4),
                }
            )
        window.append((tries, rng.binomial(tries, p)))
    return rows
