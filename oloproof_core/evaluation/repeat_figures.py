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
from oloproof_core.results.columns.case_columns import CaseColumns

AUTO_METHOD = (
    "repeats: auto; a case's tries fixed before the run from earlier runs of the same "
    "cases; pass@k and pass^k need k tries of every case and are not reported"
)
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
    tries: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The figures `Result.provenance["repeats"]` keeps for a run of `repeats` per case;
    with `tries` (what `repeats: auto` allocated, `allocation_figures`), each case's
    stability over the tries it had, without pass@k."""
    criteria = [e.criterion for e in evaluators if e.value_type == "pass_fail"]
    if isinstance(cases, CaseColumns):
        case_ids, outcomes = _column_outcomes(cases, criteria)
    else:
        case_ids, outcomes = _case_outcomes(cases, criteria)
    if tries is not None:  # `repeats: auto`: pass@k needs k tries of every case
        return {
            "repeats": repeats,
            "cases": len(case_ids),
            "method": AUTO_METHOD,
            "auto": tries,
            "metrics": [_auto_figures(name, outcomes[name]) for name in criteria],
        }
    metrics = [
        _metric_figures(criterion, outcomes[criterion], repeats, confidence)
        for criterion in criteria
    ]
    return {"repeats": repeats, "cases": len(case_ids), "method": METHOD, "metrics": metrics}


Outcomes = dict[str, list[bool | None]]
"""A criterion's outcomes by case, one per repeat that has a verdict (None: no value)."""


def _case_outcomes(
    cases: Sequence[CaseResult], criteria: Sequence[str]
) -> tuple[set[str], dict[str, Outcomes]]:
    case_ids: set[str] = set()
    outcomes: dict[str, Outcomes] = {criterion: {} for criterion in criteria}
    for case in cases:
        case_id = case_id_of(case.id)
        case_ids.add(case_id)
        for criterion in criteria:
            found = outcomes[criterion].setdefault(case_id, [])
            if criterion in case.verdicts:
                value = case.verdicts[criterion].value
                found.append(None if value is None else bool(value))
    return case_ids, outcomes


def _column_outcomes(
    columns: CaseColumns, criteria: Sequence[str]
) -> tuple[set[str], dict[str, Outcomes]]:
    """As `_case_outcomes`, read from the value columns a worker concludes a run from:
    making each case whole there took half a minute per 300,000 repeats."""
    of_case = [case_id_of(repeat_id) for repeat_id in columns.ids]
    outcomes: dict[str, Outcomes] = {}
    for criterion in criteria:
        grouped: Outcomes = {}
        for case_id, value in zip(of_case, columns.metric_values(criterion).tolist(), strict=True):
            grouped.setdefault(case_id, []).append(None if value != value else bool(value))
        outcomes[criterion] = grouped
    return set(of_case), outcomes


def _metric_figures(
    criterion: str, outcomes: Outcomes, k: int, confidence: float
) -> dict[str, Any]:
    per_case = [_Case(case_id, found) for case_id, found in outcomes.items()]
    complete = [case for case in per_case if len(case.passes) == k]
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
        **_stability(per_case, complete),
    }


def _auto_figures(criterion: str, outcomes: Outcomes) -> dict[str, Any]:
    """A metric's stable and flaky cases among those tried more than once, and how many
    were tried once (their one try shows no flakiness either way)."""
    per_case = [_Case(case_id, found) for case_id, found in outcomes.items()]
    once = [case for case in per_case if len(case.outcomes) == 1]
    several = [case for case in per_case if len(case.outcomes) > 1]
    complete = [case for case in several if len(case.passes) == len(case.outcomes)]
    return {"metric": criterion, **_stability(several, complete), "tried_once": len(once)}


def _stability(cases: Sequence[_Case], complete: Sequence[_Case]) -> dict[str, Any]:
    """Among `cases`, the complete ones (a verdict for every try) that always passed or
    always failed, the flaky ones (both outcomes), and the rest (incomplete)."""
    flaky = [case for case in cases if len(set(case.passes)) == 2]
    stable_pass = sum(1 for case in complete if all(case.passes))
    stable_fail = sum(1 for case in complete if not any(case.passes))
    return {
        "stable_pass": stable_pass,
        "stable_fail": stable_fail,
        "flaky": len(flaky),
        "flaky_cases": sorted(case.id for case in flaky)[:FLAKY_LISTED],
        "incomplete": len(cases) - stable_pass - stable_fail - len(flaky),
    }


FLAKY_LISTED = 20
"""How many flaky cases the figures name (the first by id); the count covers them all."""


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
