"""Flaky or regressed: each case of two repeated runs judged against its own noise.

A run with repeats holds each case k times (`<case id>#r<j>`). Here the repeats are put
back together: per case and per metric, both sides' repeat outcomes, an exact test of
the change (`_case_tests`: Fisher's for pass/fail, a permutation test for scores) and
Tarone–Holm control across the cases, so that the chance that any case is marked
regressed or improved while its release did not change it is at most α.

Statuses per case and metric:
- "regressed" / "improved": the change is beyond the case's noise (adjusted p ≤ α);
- "flaky": not beyond it, and a side passed some repeats and failed others (scores:
  gave different values);
- "changed": not beyond it, each side consistent but the two differ (without repeats
  every change is this: one try per side can never show a change beyond noise);
- "stable_pass" / "stable_fail": passed (failed) every repeat on both sides; for
  scores "unchanged": one value throughout;
- "missing": a side has no value for the case.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from oloproof_core.errors import ConfigError
from oloproof_core.results.compare._case_tests import (
    fisher_two_sided,
    permutation_two_sided,
    tarone_holm,
)
from oloproof_core.results.compare._repeat_evidence import RepeatCase, RepeatEvidence, case_status

if TYPE_CHECKING:
    from oloproof_core.results.compare._figures import ComparisonFigures, MetricComparison

REPEAT_FILTERS = (
    "all",
    "regressed",
    "improved",
    "flaky",
    "changed",
    "stable_pass",
    "stable_fail",
    "unchanged",
    "missing",
)
"""Which cases `RepeatCases.filter` (and `--cases`, `?cases=`) keeps: those with the
status on a shown metric."""
METHOD = (
    "per case: Fisher's exact test (pass/fail) or an exact permutation test of the mean "
    "(scores) on the repeats, two-sided; across cases: Tarone's rule then Holm's step-down, "
    "family-wise error at most {alpha:g}"
)
_REPEAT_SUFFIX = re.compile(r"#r[1-9][0-9]*\Z")


def case_of(repeat_id: str) -> str:
    """The case a repeat's id names (`q7#r2` → `q7`); any other id is a case of its own."""
    found = _REPEAT_SUFFIX.search(repeat_id)
    return repeat_id if found is None or found.start() == 0 else repeat_id[: found.start()]


class RepeatCases(Sequence[RepeatCase]):
    """The cases of a comparison, each with its status and evidence per metric.

    `alpha` is the family-wise level across cases (default: 1 − the comparison's
    confidence); `metric` narrows the statuses to one metric (every compared metric when
    None). The sequence holds every case in the runs' order; `filter` keeps one status.
    """

    def __init__(
        self,
        comparison: ComparisonFigures,
        *,
        alpha: float | None = None,
        metric: str | None = None,
    ) -> None:
        level = round(1.0 - comparison.confidence, 12) if alpha is None else alpha
        if not 0.0 < level < 1.0:
            raise ConfigError(f"alpha must be between 0 and 1 (e.g. 0.05), got {level}")
        self.alpha = level
        self.repeats = comparison.repeats
        self.auto = comparison.auto
        items = _shown(comparison, metric)
        ids = list(items[0]._ids) if items else []
        # Without repeats an id is a case, whatever it looks like.
        self.cases_of_ids = [case_of(case_id) for case_id in ids] if self.with_repeats else ids
        groups = _Groups.of(self.cases_of_ids)
        evidence = [_metric_evidence(item, groups, level) for item in items]
        self._cases = [
            RepeatCase(
                case_id=case_id,
                status=case_status([column[index] for column in evidence]),
                repeat_ids=tuple(ids[position] for position in positions.tolist()),
                metrics=tuple(column[index] for column in evidence),
            )
            for index, (case_id, positions) in enumerate(
                zip(groups.case_ids, groups.positions, strict=True)
            )
        ]
        self._by_id = {case.case_id: case for case in self._cases}

    @property
    def method(self) -> str:
        return METHOD.format(alpha=self.alpha)

    @property
    def with_repeats(self) -> bool:
        """Whether either run repeated its cases (else no case can pass its test)."""
        return max(self.repeats) > 1

    def of(self, case_id: str) -> RepeatCase:
        """The case a case id or a repeat's id belongs to."""
        return self._by_id[case_of(case_id) if self.with_repeats else case_id]

    def filter(self, status: str) -> list[RepeatCase]:
        """The cases with `status` on a shown metric (all of them for "all")."""
        check_repeat_filter(status)
        if status == "all":
            return list(self._cases)
        return [case for case in self._cases if case.has(status)]

    def counts(self) -> dict[str, int]:
        """How many cases each filter keeps."""
        return {status: len(self.filter(status)) for status in REPEAT_FILTERS}

    def matches(self, status: str) -> np.ndarray[Any, np.dtype[np.bool_]]:
        """Per id of the comparison (repeats included), whether its case has `status`."""
        check_repeat_filter(status)
        wanted = {case.case_id for case in self.filter(status)}
        return np.fromiter((name in wanted for name in self.cases_of_ids), bool)

    def to_dict(self) -> dict[str, Any]:
        return {
            "alpha": self.alpha,
            "method": self.method,
            "repeats": {"baseline": self.repeats[0], "candidate": self.repeats[1]},
            "counts": self.counts(),
            "cases": [case.to_dict() for case in self._cases],
        }

    def __len__(self) -> int:
        return len(self._cases)

    @overload
    def __getitem__(self, index: int) -> RepeatCase: ...
    @overload
    def __getitem__(self, index: slice) -> list[RepeatCase]: ...
    def __getitem__(self, index: int | slice) -> RepeatCase | list[RepeatCase]:
        return self._cases[index]

    def __iter__(self) -> Iterator[RepeatCase]:
        return iter(self._cases)


def check_repeat_filter(status: str) -> None:
    if status not in REPEAT_FILTERS:
        raise ConfigError(f"cases must be one of {', '.join(REPEAT_FILTERS)}; got {status!r}")


def _shown(comparison: ComparisonFigures, metric: str | None) -> list[MetricComparison]:
    if metric is None or metric == "":
        return list(comparison.metrics)
    if not comparison.has_metric(metric):
        known = ", ".join(item.metric for item in comparison.metrics) or "none"
        raise ConfigError(f"no metric {metric!r} in both runs; compared metrics: {known}")
    return [comparison.metric(metric)]


@dataclass(frozen=True, slots=True)
class _Groups:
    """The comparison's ids grouped by case: the cases in their first repeat's order,
    each id's case (`codes`) and each case's ids' positions."""

    case_ids: list[str]
    codes: np.ndarray[Any, np.dtype[np.intp]]
    positions: list[np.ndarray[Any, np.dtype[np.intp]]]

    @classmethod
    def of(cls, cases_of_ids: Sequence[str]) -> _Groups:
        names = np.asarray(cases_of_ids, dtype=object)
        if names.size == 0:
            return cls([], np.zeros(0, np.intp), [])
        _, first, inverse = np.unique(names, return_index=True, return_inverse=True)
        rank = np.empty(first.size, np.intp)
        rank[np.argsort(first, kind="stable")] = np.arange(first.size)
        codes = rank[inverse.reshape(-1)]
        bounds = np.cumsum(np.bincount(codes, minlength=first.size))[:-1]
        positions = np.split(np.argsort(codes, kind="stable"), bounds)
        return cls([str(names[i]) for i in np.sort(first)], codes, positions)


def _metric_evidence(item: MetricComparison, groups: _Groups, alpha: float) -> list[RepeatEvidence]:
    """Each case's evidence on one metric, its p-value adjusted across the cases."""
    if item.value_type == "pass_fail":
        return _pass_fail_evidence(item, groups, alpha)
    sides = [
        (_observed(item._baseline[positions]), _observed(item._candidate[positions]))
        for positions in groups.positions
    ]
    tests = [
        permutation_two_sided(before.tolist(), after.tolist())
        if before.size and after.size
        else (1.0, 1.0)
        for before, after in sides
    ]
    adjusted = tarone_holm([t[0] for t in tests], [t[1] for t in tests], alpha)
    return [
        RepeatEvidence.of(
            metric=item.metric,
            baseline=before,
            candidate=after,
            p_value=test[0] if before.size and after.size else None,
            adjusted_p_value=kept,
            alpha=alpha,
        )
        for (before, after), test, kept in zip(sides, tests, adjusted, strict=True)
    ]


def _pass_fail_evidence(
    item: MetricComparison, groups: _Groups, alpha: float
) -> list[RepeatEvidence]:
    """Passes and tries per case counted at once, each table's test looked up once."""
    count = len(groups.case_ids)
    sides = []
    for values in (item._baseline, item._candidate):
        seen = ~np.isnan(values)
        tries = np.bincount(groups.codes, weights=seen, minlength=count)
        passes = np.bincount(groups.codes, weights=seen & (values >= 1.0), minlength=count)
        sides.append(
            list(zip(passes.astype(int).tolist(), tries.astype(int).tolist(), strict=True))
        )
    tests = [
        fisher_two_sided(a, n, b, m) if n and m else (1.0, 1.0)
        for (a, n), (b, m) in zip(sides[0], sides[1], strict=True)
    ]
    adjusted = tarone_holm([t[0] for t in tests], [t[1] for t in tests], alpha)
    return [
        RepeatEvidence.counted(
            metric=item.metric,
            baseline=before,
            candidate=after,
            p_value=test[0] if before[1] and after[1] else None,
            adjusted_p_value=kept,
            alpha=alpha,
        )
        for before, after, test, kept in zip(sides[0], sides[1], tests, adjusted, strict=True)
    ]


def _observed(values: np.ndarray[Any, Any]) -> np.ndarray[Any, np.dtype[np.float64]]:
    found: np.ndarray[Any, np.dtype[np.float64]] = values[~np.isnan(values)]
    return found
