"""Reading case annotations: one case's annotations and trail, a page's in bulk, filters.

A disagreement is a pass/fail rating opposite to what was measured: the chosen
criterion's verdict (at the top of its range or not), or else the whole case's outcome
(passed or failed; a missing or pending case disagrees with nobody).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Q, QuerySet

from metrics.batching import KEY_BATCH, batches
from metrics.models import CaseVerdict
from runs.access import Actor, run_for
from runs.errors import NotFoundError
from runs.models import CaseAnnotation, CaseAnnotationChange, CaseResult, Rating, Run

ANNOTATION_FILTERS = {
    "annotated": "annotated",
    "disagree": "disagrees with the verdict",
    "rated_pass": "rated pass",
    "rated_fail": "rated fail",
    "scored": "scored",
    "commented": "commented",
    "unannotated": "not annotated",
}
"""The case table's annotation filters, with their labels."""

_SAYS_SOMETHING = ~Q(rating="") | Q(score__isnull=False) | ~Q(comment="")


def run_annotations(*, run: Run) -> QuerySet[CaseAnnotation]:
    """The run's annotations that say something (a cleared one is kept only in its trail)."""
    return CaseAnnotation.objects.filter(run=run).filter(_SAYS_SOMETHING)


def by_annotation(
    query: QuerySet[CaseResult], *, run: Run, kind: str, criterion: str | None, top: float
) -> QuerySet[CaseResult]:
    """`query` narrowed to the cases an annotation filter (ANNOTATION_FILTERS) keeps."""
    annotations = run_annotations(run=run)
    if kind == "annotated":
        return query.filter(case_id__in=annotations.values("case_id"))
    if kind == "unannotated":
        return query.exclude(case_id__in=annotations.values("case_id"))
    if kind in ("rated_pass", "rated_fail"):
        rating = Rating.PASS if kind == "rated_pass" else Rating.FAIL
        return query.filter(case_id__in=annotations.filter(rating=rating).values("case_id"))
    if kind == "scored":
        return query.filter(case_id__in=annotations.filter(score__isnull=False).values("case_id"))
    if kind == "commented":
        return query.filter(case_id__in=annotations.exclude(comment="").values("case_id"))
    rated_pass = annotations.filter(rating=Rating.PASS).values("case_id")
    rated_fail = annotations.filter(rating=Rating.FAIL).values("case_id")
    if criterion:
        verdicts = CaseVerdict.objects.filter(run_id=run.pk, criterion=criterion)
        measured_fail = verdicts.filter(value__lt=top, case_id__in=rated_pass)
        measured_pass = verdicts.filter(value__gte=top, case_id__in=rated_fail)
        return query.filter(
            Q(case_id__in=measured_fail.values("case_id"))
            | Q(case_id__in=measured_pass.values("case_id"))
        )
    return query.filter(
        Q(outcome=CaseResult.Outcome.FAILED, case_id__in=rated_pass)
        | Q(outcome=CaseResult.Outcome.PASSED, case_id__in=rated_fail)
    )


def annotations_by_case(*, run: Run, case_ids: Iterable[str]) -> dict[str, list[CaseAnnotation]]:
    """The annotations of some cases of a run, grouped by case id (batched lookups)."""
    grouped: dict[str, list[CaseAnnotation]] = {}
    for batch in batches(dict.fromkeys(case_ids), KEY_BATCH):
        rows = run_annotations(run=run).filter(case_id__in=batch).order_by("created_at", "id")
        for annotation in rows:
            grouped.setdefault(annotation.case_id, []).append(annotation)
    return grouped


@dataclass(frozen=True, slots=True)
class CaseAnnotations:
    """A case's annotations (the current word of each person) and their full trail."""

    run: Run
    case_id: str
    annotations: list[CaseAnnotation]
    changes: list[CaseAnnotationChange]


def case_annotations(*, user: Actor, run_id: int, case_id: str) -> CaseAnnotations:
    """One case's annotations and every change to them, oldest first."""
    run = run_for(user=user, run_id=run_id)
    if not CaseResult.objects.filter(run=run, case_id=case_id).exists():
        raise NotFoundError(f"run {run.pk} has no case {case_id!r}")
    annotations = list(
        CaseAnnotation.objects.filter(run=run, case_id=case_id).order_by("created_at", "id")
    )
    changes = list(
        CaseAnnotationChange.objects.filter(run=run, case_id=case_id).order_by("changed_at", "id")
    )
    return CaseAnnotations(run=run, case_id=case_id, annotations=annotations, changes=changes)


def annotation_of(*, annotations: CaseAnnotations, author_name: str) -> CaseAnnotation | None:
    """This author's annotation among a case's, if they made one."""
    for annotation in annotations.annotations:
        if annotation.author_name == author_name:
            return annotation
    return None
