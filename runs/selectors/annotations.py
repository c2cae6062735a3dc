"""Reading case annotations: one case's annotations and trail, a page's in bulk, filters.

A disagreement is an annotation opposite to what was measured: the chosen criterion's
verdict, or else the whole case's outcome (passed counts as 1, failed as 0; a missing
or pending case disagrees with nobody). A pass/fail rating disagrees when it is the
other side of the top of the criterion's range; a score (0 to 1) when it is more than
half the range away from the verdict's value, so 0.3 disagrees with a pass and 0.6
does not.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Exists, OuterRef, Q, QuerySet

from metrics.batching import KEY_BATCH, batches
from metrics.models import CaseVerdict
from runs.access import Actor, run_for
from runs.models import CaseAnnotation, CaseAnnotationChange, CaseResult, Rating, Run
from runs.selectors.case_hints import case_not_found

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

DISAGREEMENT_GAP = 0.5
"""How far (a share of the range) a person's score must be from the verdict to disagree."""
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
    scored = annotations.filter(score__isnull=False)
    if criterion:
        verdicts = CaseVerdict.objects.filter(run_id=run.pk, criterion=criterion)
        measured_fail = verdicts.filter(value__lt=top, case_id__in=rated_pass)
        measured_pass = verdicts.filter(value__gte=top, case_id__in=rated_fail)
        far = verdicts.filter(case_id=OuterRef("case_id")).filter(
            Q(value__lt=(OuterRef("score") - DISAGREEMENT_GAP) * top)
            | Q(value__gt=(OuterRef("score") + DISAGREEMENT_GAP) * top)
        )
        return query.filter(
            Q(case_id__in=measured_fail.values("case_id"))
            | Q(case_id__in=measured_pass.values("case_id"))
            | Q(case_id__in=scored.filter(Exists(far)).values("case_id"))
        )
    low = scored.filter(score__lt=1 - DISAGREEMENT_GAP).values("case_id")
    high = scored.filter(score__gt=DISAGREEMENT_GAP).values("case_id")
    return query.filter(
        Q(outcome=CaseResult.Outcome.FAILED, case_id__in=rated_pass)
        | Q(outcome=CaseResult.Outcome.PASSED, case_id__in=rated_fail)
        | Q(outcome=CaseResult.Outcome.PASSED, case_id__in=low)
        | Q(outcome=CaseResult.Outcome.FAILED, case_id__in=high)
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
        raise case_not_found(run, case_id)
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
