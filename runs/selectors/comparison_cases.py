"""A comparison case by case, for the grid, the API and the export.

The cached comparison already holds every case's value per metric on both sides,
so filtering and ordering 100,000 cases is array work in the engine
(`Comparison.cases`); which cases' outputs differ is one query the database answers
(`runs_outputs_changed`, cached too). Only the shown page (or one export chunk) has
its content read, in three bulk queries: the dataset rows and both runs' outputs.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from django.urls import reverse

import oloproof_core as engine
from metrics.batching import KEY_BATCH, batches
from oloproof_core.results.compare import (
    CaseChange,
    CaseChanges,
    CaseContent,
    export_format,
    export_lines,
)
from runs.access import Actor, runs_visible
from runs.errors import InvalidRequestError, NotFoundError
from runs.models import CaseResult, CaseTranscript, DatasetCase, Run
from runs.selectors.comparison import runs_compare
from runs.selectors.comparison_outputs import runs_outputs_changed

_PATH_SAFE = "/~:@!$&'()*+,;="
"""What `reverse` leaves unquoted in a path, so these links match the resolver's own."""


@dataclass(frozen=True, slots=True)
class CaseView:
    """Which cases to show (`show`), judged on which metric (all when None), in what order;
    `cases`: only the cases with this status against their own noise (`REPEAT_FILTERS`)."""

    show: str = "all"
    metric: str | None = None
    order: str = "case"
    fdr: bool = True
    cases: str = "all"


@dataclass(frozen=True, slots=True)
class ComparedCase:
    """One case of the grid: its values and change, its content, links into both runs."""

    change: CaseChange
    content: CaseContent
    baseline_url: str | None
    candidate_url: str | None
    steps_url: str | None = None
    """Where the two transcripts of the case are compared (None: neither run kept one)."""

    def to_dict(self) -> dict[str, Any]:
        content = self.content
        return {
            **self.change.to_dict(),
            "input": content.input,
            "expected": content.expected,
            "baseline": {"output": content.baseline_output, "error": content.baseline_error},
            "candidate": {"output": content.candidate_output, "error": content.candidate_error},
            "baseline_url": self.baseline_url,
            "candidate_url": self.candidate_url,
        }


def comparison_cases(*, user: Actor, baseline: Run, candidate: Run, view: CaseView) -> CaseChanges:
    """The compared cases `view` selects; a filter, metric or order not offered is a 400.

    The filters' counts include `output_changed`: the cases whose recorded output or
    error differs, whether or not a metric's value moved."""
    _require_visible(user, baseline, candidate)
    comparison = runs_compare(baseline=baseline, candidate=candidate, fdr=view.fdr)
    key = (id(comparison), view.show, view.metric, view.order, view.cases)
    with _recent_lock:
        kept = _recent_views.get(key)
    if kept is not None and kept.comparison is comparison:
        return kept
    changed = runs_outputs_changed(baseline=baseline, candidate=candidate)
    try:
        changes = comparison.cases(
            show=view.show,
            metric=view.metric,
            order=view.order,
            output_changed=changed,
            repeat_status=view.cases,
        )
    except engine.OloproofError as exc:
        raise InvalidRequestError(str(exc)) from None
    with _recent_lock:
        _recent_views[key] = changes
        while len(_recent_views) > RECENT_VIEWS:
            _recent_views.popitem(last=False)
    return changes


RECENT_VIEWS = 4
"""Filtered and ordered views of recent comparisons kept in this process. Paging
through a grid asks for one view many times, and building it costs array work over
every case and a test of each id against the changed outputs: ~1 s for a million
cases on a loaded 2-core machine, against milliseconds for the page itself. A view
holds its comparison, so the comparison's identity in the key is never reused while
the view is kept."""
_recent_views: OrderedDict[tuple[int, str, str | None, str, str], CaseChanges] = OrderedDict()
_recent_lock = threading.Lock()


class ComparedCasePages:
    """Compared cases as a sliceable sequence of whole rows, for a Paginator or the API.

    A slice reads its cases' content in three queries, wherever it starts. With
    `records` a slice holds plain dicts (the API's items) instead of `ComparedCase`s.
    """

    def __init__(
        self, *, changes: CaseChanges, baseline: Run, candidate: Run, records: bool = False
    ) -> None:
        self.changes, self.records = changes, records
        self.baseline, self.candidate = baseline, candidate
        self._before = reverse("runs:cases", args=[baseline.pk])
        self._after = reverse("runs:cases", args=[candidate.pk])
        self._pair = urlencode({"baseline": baseline.pk, "candidate": candidate.pk})

    def all(self) -> ComparedCasePages:
        return self

    def count(self) -> int:
        return len(self.changes)

    def __len__(self) -> int:
        return len(self.changes)

    def __getitem__(self, window: slice) -> list[Any]:
        rows = self.changes[window]
        ids = [r.case_id for r in rows]
        content = comparison_case_content(
            baseline=self.baseline, candidate=self.candidate, case_ids=ids
        )
        traced = set(
            CaseTranscript.objects.filter(
                run_id__in=(self.baseline.pk, self.candidate.pk), case_id__in=ids
            ).values_list("case_id", flat=True)
        )
        cases = [
            ComparedCase(
                change=row,
                content=content.get(row.case_id) or CaseContent(),
                baseline_url=self._link(self._before, row.case_id) if row.in_baseline else None,
                candidate_url=self._link(self._after, row.case_id) if row.in_candidate else None,
                steps_url=self._steps_link(row.case_id) if row.case_id in traced else None,
            )
            for row in rows
        ]
        return [case.to_dict() for case in cases] if self.records else cases

    @staticmethod
    def _link(prefix: str, case_id: str) -> str:
        return prefix + quote(case_id, safe=_PATH_SAFE)

    def _steps_link(self, case_id: str) -> str:
        return reverse("runs:compare_case", args=[case_id]) + "?" + self._pair


def comparison_case_content(
    *, baseline: Run, candidate: Run, case_ids: Sequence[str]
) -> dict[str, CaseContent]:
    """Input, expected value and both runs' outputs and errors of some cases, in bulk."""
    rows: dict[str, tuple[Any, Any]] = {}
    outputs: dict[tuple[int, str], tuple[Any, str | None]] = {}
    for batch in batches(dict.fromkeys(case_ids), KEY_BATCH):
        if candidate.dataset_id is not None:
            found = DatasetCase.objects.filter(dataset_id=candidate.dataset_id, case_id__in=batch)
            for case_id, input_, expected in found.values_list("case_id", "input", "expected"):
                rows[case_id] = (input_, expected)
        results = CaseResult.objects.filter(
            run_id__in=(baseline.pk, candidate.pk), case_id__in=batch
        ).values_list("run_id", "case_id", "output", "error_type", "error_message")
        for run_id, case_id, output, error_type, message in results:
            outputs[run_id, case_id] = (output, f"{error_type}: {message}" if error_type else None)
    content = {}
    for case_id in case_ids:
        input_, expected = rows.get(case_id, (None, None))
        before = outputs.get((baseline.pk, case_id), (None, None))
        after = outputs.get((candidate.pk, case_id), (None, None))
        content[case_id] = CaseContent(
            input=input_,
            expected=expected,
            baseline_output=before[0],
            candidate_output=after[0],
            baseline_error=before[1],
            candidate_error=after[1],
        )
    return content


def comparison_export_lines(
    *, user: Actor, baseline: Run, candidate: Run, view: CaseView, format: str
) -> Iterator[str]:
    """The export's lines (CSV or JSONL), each chunk's content read in bulk as it streams."""
    try:
        chosen = export_format("", format)
    except engine.OloproofError as exc:
        raise InvalidRequestError(str(exc)) from None
    changes = comparison_cases(user=user, baseline=baseline, candidate=candidate, view=view)

    def content(case_ids: Sequence[str]) -> dict[str, CaseContent]:
        return comparison_case_content(baseline=baseline, candidate=candidate, case_ids=case_ids)

    return export_lines(changes, content, format=chosen)


def _require_visible(user: Actor, baseline: Run, candidate: Run) -> None:
    """Both runs must be the user's to see (a run they may not see is reported missing)."""
    wanted = {baseline.pk, candidate.pk}
    seen = set(runs_visible(user=user).filter(pk__in=wanted).values_list("pk", flat=True))
    for run_id in sorted(wanted - seen):
        raise NotFoundError(f"no run {run_id}")
