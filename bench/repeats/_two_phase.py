"""Adaptive repeats read without bias by two phases: how wide at half uniform k = 5's calls?

Every case runs twice; its two tries put it in a stratum (both passed, both failed, they
disagreed). A stratum's mean chance of passing is then read from further tries of its
cases (all of them, or a random share `f`), which are independent of the first two, so
the release figure `sum_s w_s * mean_s` stays unbiased (two-phase stratified sampling,
Neyman 1938). Its variance per case, for many cases, is the spread between the strata's
means plus, per stratum, `w_s * (var(p | s) + E[p (1 - p) | s] / m_s) / f_s`.

This searches the plans that spend at most 2.5 calls a case (half of uniform k = 5):
`m_D` further tries for every disagreeing case, `m` for a share `f` of the agreeing
ones, and reports the narrowest against uniform k = 5 and k = 2, in closed form from
the population's Beta moments (no simulation).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from bench.repeats._population import Population

BUDGET = 2.5
"""Calls per case allowed: half of uniform k = 5."""


def _moment(population: Population, passes: int, fails: int) -> float:
    """E[p^passes (1 - p)^fails] over the population's cases."""
    a, b = population.a, population.b
    flaky = math.exp(
        math.lgamma(a + passes) + math.lgamma(b + fails) - math.lgamma(a + b + passes + fails)
        - math.lgamma(a) - math.lgamma(b) + math.lgamma(a + b)
    )  # fmt: skip
    always_pass = 1.0 if fails == 0 else 0.0
    always_fail = 1.0 if passes == 0 else 0.0
    return (
        population.always_pass * always_pass
        + population.always_fail * always_fail
        + population.flaky * flaky
    )


def _strata(population: Population) -> dict[str, tuple[float, float, float]]:
    """Per stratum of the first two tries: its share, E[p | s] and E[p^2 | s]."""
    shapes: dict[str, Callable[[int], tuple[float, int, int]]] = {
        "both passed": lambda extra: (1.0, 2 + extra, 0),
        "both failed": lambda extra: (1.0, extra, 2),
        "disagreed": lambda extra: (2.0, 1 + extra, 1),
    }
    found = {}
    for name, shape in shapes.items():
        share = shape(0)[0] * _moment(population, *shape(0)[1:])
        first = shape(1)[0] * _moment(population, *shape(1)[1:]) / share
        second = shape(2)[0] * _moment(population, *shape(2)[1:]) / share
        found[name] = (share, first, second)
    return found


def _plan(
    strata: dict[str, tuple[float, float, float]], plan: dict[str, tuple[int, float]]
) -> tuple[float, float]:
    """A plan's calls per case, and its strata's part of the variance per case."""
    calls, total = 2.0, 0.0
    for name, (tries, followed) in plan.items():
        share, first, second = strata[name]
        calls += share * tries * followed
        total += share * (second - first**2 + (first - second) / tries) / followed
    return calls, total


def two_phase_rows(population: Population) -> list[dict[str, Any]]:
    strata = _strata(population)
    mean = sum(share * first for share, first, _ in strata.values())
    between = sum(share * first**2 for share, first, _ in strata.values()) - mean**2
    variance = _moment(population, 2, 0) - population.pass_rate() ** 2
    within = population.pass_rate() - _moment(population, 2, 0)
    best = (math.inf, 0, 0.0, 0)
    for further in range(1, 11):  # tries for each disagreeing case
        for hundredths in range(1, 101):
            for again in range(1, 6):  # tries for each agreeing case followed up
                plan = {"disagreed": (further, 1.0)}
                plan |= dict.fromkeys(("both passed", "both failed"), (again, hundredths / 100))
                calls, total = _plan(strata, plan)
                if calls <= BUDGET:
                    best = min(best, (between + total, further, hundredths / 100, again))
    uniform = {k: variance + within / k for k in (2, 5)}
    total, further, share, again = best
    return [
        {
            "population": population.name,
            "between strata": round(between, 4),
            "uniform k=5": round(uniform[5], 4),
            "uniform k=2": round(uniform[2], 4),
            "best two-phase": round(total, 4),
            "plan": f"{further} more if they disagreed; {again} more for {share:.0%} of the rest",
            "two-phase / k=5 width": round(math.sqrt(total / uniform[5]), 3),
            "k=2 / k=5 width": round(math.sqrt(uniform[2] / uniform[5]), 3),
        }
    ]
