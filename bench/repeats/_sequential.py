"""A sequential gate over repeated cases: the anytime-valid interval on each case's mean.

A run that stops when decided (`oloproof run --until-decided` with `repeats: k`) adds whole
cases, batch after batch, and its gate reads each case's mean over its k tries with the
running interval (`stats.case_means`, `stats.running_interval`, as the gate calls them).
Per release: 300 cases in the order of their ids' digests, k tries each, looks after every
50 cases; a release is covered when every look's interval holds the population's pass
rate, which is what a gate that may stop at any look needs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench.repeats._population import Population
from oloproof_core.stats import case_means, running_interval

CASES = 300
LOOKS = range(50, CASES + 1, 50)


def sequential_rows(population: Population, k: int, reps: int, seed: int) -> list[dict[str, Any]]:
    """Coverage over every look, and the width at the first and the last look."""
    rng = np.random.default_rng(seed)
    passes = population.passes(rng, reps, CASES, k)
    names = [f"c{i}" for i in range(CASES)]
    cases = [name for name in names for _ in range(k)]
    rows = [f"{name}#r{j}" for name in names for j in range(1, k + 1)]
    order = np.argsort([_key(name) for name in names])
    truth = population.pass_rate()
    covered, first, last = 0, [], []
    for release in passes:
        tries = np.concatenate([[1.0] * int(x) + [0.0] * (k - int(x)) for x in release])
        found = case_means(tries, tries, rows, cases)
        assert found is not None
        low, high, keys = found
        means = {key: (lo, hi) for key, lo, hi in zip(keys, low, high, strict=True)}
        seen = [names[i] for i in order]
        ends = []
        for look in LOOKS:
            part = seen[:look]
            values = np.array([means[name][0] for name in part])
            ends.append(running_interval(values, values, part, CASES))
        covered += all(lower <= truth <= upper for lower, upper in ends)
        first.append(ends[0][1] - ends[0][0])
        last.append(ends[-1][1] - ends[-1][0])
    return [
        {
            "population": population.name,
            "k": k,
            "cases": CASES,
            "looks": len(LOOKS),
            "coverage at every look": round(covered / reps, 4),
            "se": round(float(np.sqrt(covered / reps * (1 - covered / reps) / reps)), 4),
            "width at 50": round(float(np.mean(first)), 4),
            f"width at {CASES}": round(float(np.mean(last)), 4),
        }
    ]


def _key(name: str) -> str:
    import hashlib

    return hashlib.sha256(name.encode()).hexdigest()
