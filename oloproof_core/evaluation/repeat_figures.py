"""A repeated run's figures per pass/fail metric: pass@k, pass^k and flaky cases.

The run's own metrics already take the case as the unit (its repeats share a cluster).
Here each case's k repeats give one value of pass@k and one of pass^k (`stats`'
`pass_at_k`, `pass_all_k`), and the release's figure is their mean over cases with a
betting interval for a bounded mean (`stats.mean_interval`). A case with a repeat
missing (the system failed, or its verdict did) has no value: it bounds the interval
at its worst and best, as a missing case does everywhere else. Each case is also
stable-pass, stable-fail or flaky (passed on some repeats, failed on others).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from oloproof_core.cases.case import CaseResult
from oloproof_core.evaluation.repeats import case_id_of
from oloproof_core.judging.evaluators import Evaluator

METHOD = (
    "per case: unbiased pass@k (Chen et al. 2021) and pass^k; over cases: betting "
    "(Waudby-Smith & Ramdas 2024), missing cases at their worst and best"
)


@dataclass(frozen=True, slots=True)
class _Case:
    """One case's outcomes over its repeats (None: that repeat has no verdict)."""

    id: str
    outcomes: list[bool | None]

    @property
    def passes(self) -> list[bool]:
        return [outcome for outcome in self.outcomes if outcome is not None]


def repeat_figures(
    cases: Sequence[CaseResult],
    evaluators: Sequence[Evaluator],
    repeats: int,
    confidence: float,
) -> dict[str, Any]:
    """The figures `Result.provenance["repeats"]` keeps for a run of `repeats` per case."""
    grouped: dict[str, list[CaseResult]] = {}
    for case in cases:
        grouped.setdefault(case_id_of(case.id), []).append(case)
    metrics = [
        _metric_figures(evaluator.criterion, grouped, repeats, confidence)
        for evaluator in evaluators
        if evaluator.value_type == "pass_fail"
    ]
    return {"repeats": repeats, "cases": len(grouped), "method": METHOD, "metrics": metrics}


def _metric_figures(
    criterion: str, grouped: dict[str, list[CaseResult]], k: int, confidence: float
) -> dict[str, Any]:
    per_case = [
        _Case(case_id, _outcomes(repeats, criterion)) for case_id, repeats in grouped.items()
    ]
    complete = [case for case in per_case if len(case.passes) == k]
    flaky = [case for case in per_case if len(set(case.passes)) == 2]
    stable_pass = sum(1 for case in complete if all(case.passes))
    stable_fail = sum(1 for case in complete if not any(case.passes))
    from oloproof_core import stats

    return {
        "metric": criterion,
        "k": k,
        "pass_at_k": _mean_over_cases(
            per_case, complete, lambda c: stats.pass_at_k(k, c, k), confidence
        ),
        "pass_all_k": _mean_over_cases(
            per_case, complete, lambda c: stats.pass_all_k(k, c, k), confidence
        ),
        "stable_pass": stable_pass,
        "stable_fail": stable_fail,
        "flaky": len(flaky),
        "flaky_cases": sorted(case.id for case in flaky)[:FLAKY_LISTED],
        "incomplete": len(per_case) - stable_pass - stable_fail - len(flaky),
    }


FLAKY_LISTED = 20
"""How many flaky cases the figures name (the first by id); the count covers them all."""


def _outcomes(repeats: Sequence[CaseResult], criterion: str) -> list[bool | None]:
    values = [case.verdicts[criterion].value for case in repeats if criterion in case.verdicts]
    return [None if value is None else bool(value) for value in values]


def _mean_over_cases(
    per_case: Sequence[_Case],
    complete: Sequence[_Case],
    value_of: Callable[[int], float],
    confidence: float,
) -> dict[str, Any]:
    from oloproof_core import stats

    values = [value_of(sum(case.passes)) for case in complete]
    kept = {case.id for case in complete}
    keys = [case.id for case in complete] + [case.id for case in per_case if case.id not in kept]
    n_missing = len(per_case) - len(complete)
    interval = stats.mean_interval(values, n_missing, 0.0, 1.0, confidence, keys=keys)
    return {
        "estimate": sum(values) / len(values) if values else None,
        "lower": interval.lower,
        "upper": interval.upper,
        "n_observed": len(values),
        "n_missing": n_missing,
    }
