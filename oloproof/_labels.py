"""People's labels from the library: label a case, import a file of labels, read them,
and see how far the judge agrees with people and what the labels do to the figure.

`oloproof label` does the same through these functions. They work on the project's
store, acting as the process itself and signing labels `<login>@command-line`;
`by="username"` acts as that account instead, whose runner role is then checked.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oloproof._cases import _on_platform, _run_number, local_author
from oloproof_core import OloproofError, read_text

if TYPE_CHECKING:
    from runs.selectors.labels import LabelReport

Row = tuple[int, str, str | None, Any, str]
"""A row as read from the file: its line, case id, metric, value and note."""

COLUMNS = ("case_id", "metric", "value", "note")
LABEL_FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}


def _actor_and_author(by: str | None) -> tuple[Any, str]:
    from runs.access import LOCAL
    from runs.selectors.projects import account_named

    if by is None:
        return LOCAL, local_author()
    return account_named(username=by), by


def label(
    run: int | str,
    case: str,
    metric: str,
    value: float | str | bool,
    *,
    note: str = "",
    by: str | None = None,
) -> dict[str, Any]:
    """Label what `run` judged on `case`: the value of `metric` you judge right.

    Pass/fail takes pass or fail (1 or 0, true or false); a score, a number in its
    range. Labelling the same case again edits your label. The label holds for every
    run whose output of the case is the same.
    """
    run_id = _run_number(run)

    def work() -> dict[str, Any]:
        from runs.writers.labels import save_label

        actor, author = _actor_and_author(by)
        saved = save_label(actor, run_id, case, metric, value, note, author_name=author)
        return {
            "run_id": run_id,
            "case_id": case,
            "metric": saved.criterion,
            "value": saved.value,
            "note": saved.note,
            "author": saved.author_name,
            "created_at": saved.created_at.isoformat(),
            "updated_at": saved.updated_at.isoformat(),
        }

    return _on_platform(work)


def import_labels(
    path: str | os.PathLike[str],
    *,
    run: int | str,
    metric: str | None = None,
    by: str | None = None,
) -> int:
    """Save every label of a CSV (header case_id,metric,value,note) or JSONL file.

    The metric column may be left out when `metric` names it for the whole file. The
    file is checked whole first: one bad row refuses it, naming each bad line, and no
    label is saved or changed. Returns how many labels were made or changed.
    """
    run_id = _run_number(run)
    where = Path(path)
    rows = list(_rows(where, metric_given=metric is not None))

    def work() -> int:
        from runs.writers.labels import LabelRow, LabelRowsError, import_labels

        actor, author = _actor_and_author(by)
        try:
            given = [LabelRow(*row) for row in rows]
            return import_labels(actor, run_id, given, metric, author_name=author)
        except LabelRowsError as exc:
            lines = [f"{where.name} line {line}: {message}" for line, message in exc.problems]
            raise OloproofError(
                f"{where}: {len(lines)} bad row{'s' if len(lines) != 1 else ''}, so no label was "
                "saved; fix them and import the file again:\n" + "\n".join(lines)
            ) from None

    return _on_platform(work)


def _rows(path: Path, *, metric_given: bool) -> Iterator[Row]:
    kind = LABEL_FORMATS.get(path.suffix.lower())
    if kind is None:
        raise OloproofError(
            f"{path}: labels are read from a .csv or .jsonl file (got {path.suffix or 'no'} "
            "extension): name the file .csv or .jsonl"
        )
    text = read_text(str(path))
    with io.StringIO(text, newline="") as handle:
        yield from (_csv_rows if kind == "csv" else _jsonl_rows)(handle, path, metric_given)


def _csv_rows(handle: Any, path: Path, metric_given: bool) -> Iterator[Row]:
    reader = csv.reader(handle)
    header = next(reader, None)
    if header is None:
        raise OloproofError(
            f"{path}: the file is empty: its first line is the header {','.join(COLUMNS)}"
        )
    names = [name.strip().lower() for name in header]
    _columns_check(path, names, metric_given)
    ended = reader.line_num
    for cells in reader:
        line, ended = ended + 1, reader.line_num
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) > len(names):
            raise OloproofError(
                f"{path} line {line}: {len(cells)} cells under {len(names)} columns: quote a "
                'value holding a comma ("like, this")'
            )
        given = dict(zip(names, cells, strict=False))
        yield (
            line,
            given.get("case_id", "").strip(),
            given.get("metric"),
            given.get("value", ""),
            given.get("note") or "",
        )


def _columns_check(path: Path, names: list[str], metric_given: bool) -> None:
    unknown = [name for name in names if name not in COLUMNS]
    if unknown:
        raise OloproofError(
            f"{path} line 1: unknown column {unknown[0]!r}: the columns are {', '.join(COLUMNS)}"
        )
    needed = ["case_id", "value"] + ([] if metric_given else ["metric"])
    missing = [name for name in needed if name not in names]
    if missing:
        hint = " (or name the metric for the whole file)" if missing == ["metric"] else ""
        raise OloproofError(f"{path} line 1: no {missing[0]!r} column: add it to the header{hint}")


def _jsonl_rows(handle: Any, path: Path, metric_given: bool) -> Iterator[Row]:
    for line, text in enumerate(handle, start=1):
        if not text.strip():
            continue
        try:
            item = json.loads(text)
        except json.JSONDecodeError as exc:
            raise OloproofError(
                f"{path} line {line}: not JSON ({exc.msg}): write one object per line"
            ) from None
        except RecursionError:
            raise OloproofError(
                f"{path} line {line}: nested too deeply: a line is one flat object"
            ) from None
        if not isinstance(item, dict):
            raise OloproofError(
                f'{path} line {line}: a line is an object like {{"case_id": "c1", "value": 1}}'
            )
        unknown = [key for key in item if key not in COLUMNS]
        if unknown:
            raise OloproofError(
                f"{path} line {line}: unknown key {unknown[0]!r}: the keys are {', '.join(COLUMNS)}"
            )
        metric = item.get("metric")
        yield (
            line,
            str(item.get("case_id") or "").strip(),
            None if metric is None else str(metric),
            item.get("value"),
            item.get("note") or "",
        )


def labels(run: int | str, metric: str) -> list[dict[str, Any]]:
    """The labelled cases of a run's metric, in the run's order, with each person's label."""
    run_id = _run_number(run)

    def work() -> list[dict[str, Any]]:
        from runs.access import LOCAL
        from runs.selectors.labels import run_labels

        return [
            {
                "case_id": item.case_id,
                "judge_value": item.judge_value,
                "mean": item.mean,
                "people_disagree": item.people_disagree,
                "judge_disagrees": item.judge_disagrees,
                "labels": [
                    {
                        "author": given.author,
                        "value": given.value,
                        "note": given.note,
                        "created_at": given.created_at.isoformat(),
                        "updated_at": given.updated_at.isoformat(),
                    }
                    for given in item.labels
                ],
            }
            for item in run_labels(user=LOCAL, run_id=run_id, criterion=metric)
        ]

    return _on_platform(work)


def calibration(run: int | str, metric: str) -> LabelReport:
    """Where a run's metric stands with labels: `.calibration` (the engine's Calibration of
    the judge against people), `.labelled` (the combined LabelledEstimate, None before the
    queue's first draw is labelled; `.labelled.known` once every case the judge scored is,
    the figure then being the people's, exact), `.people`, `.judge_only`,
    `labels_needed(width)` (never more than the cases left to label) and `to_dict()`."""
    run_id = _run_number(run)

    def work() -> LabelReport:
        from runs.access import LOCAL
        from runs.selectors.labels import metric_labels

        return metric_labels(user=LOCAL, run_id=run_id, criterion=metric)

    return _on_platform(work)
