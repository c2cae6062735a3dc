"""A recorded run's cases from the library: annotate one, read annotations, export them.

`oloproof annotate` and `oloproof export` do the same through these functions. They
work on the project's store (the same data folder or DATABASE_URL as every command),
acting as the process itself; `by="username"` acts as that account instead, whose
role in the run's project (runner or higher) is then checked.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Callable
from typing import IO, Any, TypeVar

from oloproof._platform import outside_event_loop
from oloproof_core import OloproofError, text_written

T = TypeVar("T")
KEEP: Any = object()
"""Leave this part of an existing annotation as it is."""
EXPORT_FORMATS = ("csv", "jsonl")


def _run_number(run: int | str) -> int:
    text = str(run).strip().removeprefix("#")
    if isinstance(run, bool) or not text.isdigit():
        raise OloproofError(f"a run is named by its id (12 or '#12'), got {run!r}")
    return int(text)


def _on_platform(work: Callable[[], T]) -> T:
    def ready_then_work() -> T:
        from oloproof.cli._django import django_ready

        django_ready()
        from runs.errors import DomainError

        try:
            return work()
        except DomainError as exc:
            raise OloproofError(str(exc)) from None

    return outside_event_loop(ready_then_work)


def local_author() -> str:
    """Who annotates from this process when no account is named: `<login>@command-line`."""
    try:
        login = getpass.getuser()
    except (KeyError, OSError):
        login = "someone"
    return f"{login}@command-line"


def annotate(
    run: int | str,
    case_id: str,
    *,
    rating: str | None = KEEP,
    score: float | None = KEEP,
    comment: str = KEEP,
    by: str | None = None,
) -> dict[str, Any]:
    """Set a rating ("pass"/"fail", None for none), a score (0 to 1) and a comment on a case.

    Parts not given keep their current value. The verdicts and estimates of the run are
    never changed; every change is kept in the case's annotation trail.
    """
    run_id = _run_number(run)

    def work() -> dict[str, Any]:
        from runs.access import LOCAL
        from runs.selectors.annotations import annotation_of, case_annotations
        from runs.selectors.projects import account_named
        from runs.selectors.runs import run_get
        from runs.writers.annotations import AnnotationValues, case_annotation_save

        actor: Any = LOCAL if by is None else account_named(username=by)
        author = local_author() if by is None else by
        current = annotation_of(
            annotations=case_annotations(user=actor, run_id=run_id, case_id=case_id),
            author_name=author,
        )
        values = AnnotationValues(
            rating=_kept(rating, None if current is None else current.rating) or "",
            score=_kept(score, None if current is None else current.score),
            comment=_kept(comment, "" if current is None else current.comment) or "",
        )
        saved = case_annotation_save(
            user=actor,
            run=run_get(user=actor, run_id=run_id),
            case_id=case_id,
            values=values,
            author_name=author,
        )
        return annotation_dict(saved)

    return _on_platform(work)


def _kept(given: Any, current: Any) -> Any:
    return current if given is KEEP else given


def annotation_dict(annotation: Any) -> dict[str, Any]:
    return {
        "run_id": annotation.run_id,
        "case_id": annotation.case_id,
        "author": annotation.author_name,
        "rating": annotation.rating or None,
        "score": annotation.score,
        "comment": annotation.comment,
        "created_at": annotation.created_at.isoformat(),
        "updated_at": annotation.updated_at.isoformat(),
    }


def annotations_read(
    run: int | str, case_id: str, *, history: bool = False
) -> list[dict[str, Any]]:
    """A case's annotations (each person's current word), or with `history` every change."""
    run_id = _run_number(run)

    def work() -> list[dict[str, Any]]:
        from runs.access import LOCAL
        from runs.selectors.annotations import case_annotations

        found = case_annotations(user=LOCAL, run_id=run_id, case_id=case_id)
        if not history:
            return [annotation_dict(item) for item in found.annotations]
        return [
            {
                "case_id": change.case_id,
                "author": change.author_name,
                "version": change.version,
                "rating": change.rating or None,
                "score": change.score,
                "comment": change.comment,
                "changed_at": change.changed_at.isoformat(),
            }
            for change in found.changes
        ]

    return _on_platform(work)


def export_cases(
    run: int | str,
    destination: str | os.PathLike[str] | IO[str],
    *,
    format: str | None = None,
    criterion: str | None = None,
    outcome: str | None = None,
    search: str | None = None,
    search_in: str | None = None,
    annotation: str | None = None,
) -> int:
    """Write a run's cases (as the case table filters them) as CSV or JSONL; returns how many.

    `destination` is a path (the format follows its extension unless `format` says) or
    an open text file. Each case carries its input, expected value, output, error, each
    criterion's value and feedback, and its annotations.
    """
    run_id = _run_number(run)
    chosen = _export_format(destination, format)

    def work() -> int:
        from runs.access import LOCAL
        from runs.selectors.cases import CaseFilters
        from runs.selectors.exports import run_cases_export

        filters = CaseFilters(
            criterion=criterion,
            outcome=outcome,
            search=search,
            search_in=search_in,
            annotation=annotation,
        )
        export = run_cases_export(user=LOCAL, run_id=run_id, filters=filters, export_format=chosen)
        return _write(export.lines, destination, header=chosen == "csv")

    return _on_platform(work)


def _export_format(destination: Any, given: str | None) -> str:
    if given is None and isinstance(destination, str | os.PathLike):
        given = os.path.splitext(os.fspath(destination))[1].lstrip(".").lower() or None
    chosen = given or "jsonl"
    if chosen not in EXPORT_FORMATS:
        raise OloproofError(
            f"export format must be csv or jsonl, got {chosen!r} (name the file .csv or "
            ".jsonl, or pass format=)"
        )
    return chosen


def _write(lines: Any, destination: Any, *, header: bool) -> int:
    written = 0
    if isinstance(destination, str | os.PathLike):
        # newline="" keeps the CSV writer's own line endings.
        with text_written(destination, what="the export") as handle:
            return _write(lines, handle, header=header)
    for line in lines:
        destination.write(line)
        written += 1
    return written - 1 if header and written else written
