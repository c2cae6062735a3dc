"""The one writer of people's labels.

A member with the runner role (or higher) gives a case's criterion the value they
judge right, on the metric's scale. The label is keyed by what was judged (the input,
the output, the expected value), so it belongs to the project: a later run whose
output is the same reuses it. Saving again by the same author edits their label. An
import is checked whole before anything is written: one bad row refuses the file,
naming each bad row's line, and nothing stored changes.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from metrics.batching import KEY_BATCH, batches
from runs.access import Actor, Role, account_of, author_of, run_for
from runs.errors import InvalidRequestError, NotFoundError, NotPermittedError
from runs.models import Label, Run
from runs.selectors.case_hints import case_not_found, run_case_ids
from runs.selectors.label_cases import (
    CaseToLabel,
    LabelledMetric,
    cases_to_label,
    labelled_metric_of,
)

MAX_NOTE = 10_000
MAX_PROBLEMS_SHOWN = 20
_PASS_WORDS = {"1": 1.0, "pass": 1.0, "true": 1.0, "0": 0.0, "fail": 0.0, "false": 0.0}
_NEEDS_RUNNER = "labelling a case needs a signed-in account with the runner role"


class LabelRowsError(InvalidRequestError):
    """An import refused: every bad row, as (line, what is wrong and how to fix it)."""

    def __init__(self, problems: list[tuple[int, str]]) -> None:
        self.problems = problems
        shown = [f"line {line}: {message}" for line, message in problems[:MAX_PROBLEMS_SHOWN]]
        if len(problems) > MAX_PROBLEMS_SHOWN:
            shown.append(f"... and {len(problems) - MAX_PROBLEMS_SHOWN} more bad rows")
        super().__init__("\n".join(shown))


class LabelInputError(InvalidRequestError):
    """A label's own field is wrong: `field` names it (value, note, case_id)."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True, slots=True)
class LabelRow:
    """One row of an import: the line it came from, and what it says."""

    line: int
    case_id: str
    criterion: str | None
    value: Any
    note: str = ""


def label_value(value: Any, metric: LabelledMetric) -> float:
    """`value` on the metric's scale, or an error saying which values it takes."""
    if metric.value_type == "pass_fail":
        return _pass_fail_value(value, metric.criterion)
    low, high = metric.score_range
    number: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if number is None or not math.isfinite(number) or not low <= number <= high:
        raise LabelInputError(
            f"value {value!r} is not a score of {metric.criterion!r}: give a number from "
            f"{low:g} to {high:g}",
            field="value",
        )
    return number


def _pass_fail_value(value: Any, criterion: str) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and value in (0, 1):
        return float(value)
    if isinstance(value, str) and value.strip().lower() in _PASS_WORDS:
        return _PASS_WORDS[value.strip().lower()]
    raise LabelInputError(
        f"value {value!r} is not a pass/fail value of {criterion!r}: give pass or fail "
        "(or 1 or 0, true or false)",
        field="value",
    )


def _note(note: Any) -> str:
    text = "" if note is None else note
    if not isinstance(text, str):
        raise LabelInputError(f"a note is text, got {note!r}", field="note")
    if len(text) > MAX_NOTE:
        raise LabelInputError(
            f"a note holds at most {MAX_NOTE:,} characters, got {len(text):,}", field="note"
        )
    if "\x00" in text:
        raise LabelInputError("a note cannot contain the NUL character", field="note")
    return text


def _author(actor: Actor, given: str | None) -> str:
    return author_of(actor, given, refusal=_NEEDS_RUNNER)


def _labelling(actor: Actor, run_id: int) -> Run:
    if not actor.is_authenticated:
        raise NotPermittedError(_NEEDS_RUNNER)
    return run_for(user=actor, run_id=run_id, role=Role.RUNNER, action="labelling a case")


def _key_of(
    run: Run, case: CaseToLabel | None, case_id: str, ids: Callable[[], list[str]] | None = None
) -> str:
    if case is None:
        raise case_not_found(run, case_id, ids)
    if case.key is None:
        raise LabelInputError(
            f"case {case_id!r} of run {run.pk} failed ({case.error}): it has no output to "
            "label; label it in a run where the system answered",
            field="case_id",
        )
    return case.key


def save_label(
    actor: Actor,
    run_id: int,
    case_id: str,
    criterion: str,
    value: Any,
    note: str = "",
    author_name: str | None = None,
) -> Label:
    """Set the author's label of `criterion` for what `run` judged on `case_id`.

    Needs the runner role in the run's project. Saving again edits the author's label.
    """
    run = _labelling(actor, run_id)
    author = _author(actor, author_name)
    metric = labelled_metric_of(run=run, criterion=criterion)
    number, text = label_value(value, metric), _note(note)
    key = _key_of(run, cases_to_label(run=run, case_ids=[case_id]).get(case_id), case_id)
    with transaction.atomic():
        label, created = Label.objects.select_for_update().get_or_create(
            project_id=run.project_id,
            criterion=criterion,
            key=key,
            author_name=author,
            defaults={"author": account_of(actor), "value": number, "note": text},
        )
        if not created and (label.value, label.note) != (number, text):
            label.value, label.note = number, text
            label.save(update_fields=["value", "note", "updated_at"])
    return label


@dataclass(frozen=True, slots=True)
class _Checked:
    line: int
    criterion: str
    key: str
    value: float
    note: str


def import_labels(
    actor: Actor,
    run_id: int,
    rows: Sequence[LabelRow],
    default_criterion: str | None = None,
    author_name: str | None = None,
) -> int:
    """Save every row's label, or none: a bad row refuses the whole import (LabelRowsError).

    Returns how many labels were made or changed.
    """
    run = _labelling(actor, run_id)
    author = _author(actor, author_name)
    checked = _checked_rows(run, rows, default_criterion)
    with transaction.atomic():
        return _labels_write(run, checked, author, actor)


def _checked_rows(
    run: Run, rows: Sequence[LabelRow], default_criterion: str | None
) -> list[_Checked]:
    cases = cases_to_label(run=run, case_ids=[row.case_id for row in rows])
    ids = functools.cache(lambda: run_case_ids(run))  # read once, for the first unknown id
    metrics: dict[str, LabelledMetric | Exception] = {}
    problems: list[tuple[int, str]] = []
    checked: list[_Checked] = []
    seen: dict[tuple[str, str], int] = {}
    by_key: dict[tuple[str, str], _Checked] = {}
    for row in rows:
        try:
            item = _checked_row(run, row, default_criterion, (cases, ids), metrics)
        except (InvalidRequestError, NotFoundError) as exc:
            problems.append((row.line, str(exc)))
            continue
        first = seen.setdefault((item.criterion, row.case_id), row.line)
        if first != row.line:
            problems.append(
                (
                    row.line,
                    f"case {row.case_id!r} is labelled on {item.criterion!r} again "
                    f"(first at line {first}): keep one row per case and metric",
                )
            )
            continue
        same = by_key.setdefault((item.criterion, item.key), item)
        if (same.value, same.note) != (item.value, item.note):
            problems.append((row.line, _same_content(row.case_id, same.line)))
            continue
        checked.append(item)
    if problems:
        raise LabelRowsError(problems)
    if not checked:
        raise InvalidRequestError("the file holds no labels: give one row per labelled case")
    return checked


def _same_content(case_id: str, line: int) -> str:
    return (
        f"case {case_id!r} has the same input, output and expected value as the case at line "
        f"{line}, so one label holds for both: give them the same value and note"
    )


def _checked_row(
    run: Run,
    row: LabelRow,
    default_criterion: str | None,
    cases: tuple[dict[str, CaseToLabel], Callable[[], list[str]]],
    metrics: dict[str, LabelledMetric | Exception],
) -> _Checked:
    criterion = (row.criterion or "").strip() or default_criterion
    if not criterion:
        raise InvalidRequestError(
            "no metric: fill the metric column, or name the metric for the whole file"
        )
    if criterion not in metrics:
        try:
            metrics[criterion] = labelled_metric_of(run=run, criterion=criterion)
        except (InvalidRequestError, NotFoundError) as exc:
            metrics[criterion] = exc
    metric = metrics[criterion]
    if isinstance(metric, Exception):
        raise metric
    if not row.case_id:
        raise InvalidRequestError("no case_id: name the case the label is about")
    value = label_value(row.value, metric)
    found, ids = cases
    key = _key_of(run, found.get(row.case_id), row.case_id, ids)
    return _Checked(row.line, criterion, key, value, _note(row.note))


def _labels_write(run: Run, rows: list[_Checked], author: str, actor: Actor) -> int:
    existing: dict[tuple[str, str], Label] = {}
    for batch in batches(rows, KEY_BATCH):
        query = Label.objects.select_for_update().filter(
            project_id=run.project_id,
            author_name=author,
            criterion__in={row.criterion for row in batch},
            key__in={row.key for row in batch},
        )
        existing.update({(label.criterion, label.key): label for label in query})
    made: dict[tuple[str, str], Label] = {}
    changed: list[Label] = []
    now = timezone.now()
    for row in rows:
        label = existing.get((row.criterion, row.key))
        if label is None:
            made[(row.criterion, row.key)] = Label(
                project_id=run.project_id,
                criterion=row.criterion,
                key=row.key,
                value=row.value,
                note=row.note,
                author=account_of(actor),
                author_name=author,
            )
        elif (label.value, label.note) != (row.value, row.note):
            label.value, label.note, label.updated_at = row.value, row.note, now
            changed.append(label)
    Label.objects.bulk_create(list(made.values()), batch_size=KEY_BATCH)
    Label.objects.bulk_update(changed, ["value", "note", "updated_at"], batch_size=KEY_BATCH)
    return len(made) + len(changed)
