"""The one writer of case annotations and their audit trail.

A member with the runner role (or higher) rates a case (pass or fail), scores it
(0 to 1) and comments on it; saving again edits their annotation and appends the new
state to its trail, so every change stays readable. Nothing here touches a verdict,
a case result or an estimate: a person's opinion sits beside what was measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.db import transaction

from runs.access import Actor, Role, account_of, author_of, role_require
from runs.errors import InvalidRequestError, NotPermittedError
from runs.models import CaseAnnotation, CaseAnnotationChange, CaseResult, Rating, Run
from runs.selectors.case_hints import case_not_found

MAX_COMMENT = 10_000


@dataclass(frozen=True, slots=True)
class AnnotationValues:
    """What an annotation says: a rating ("pass", "fail" or "" for none), a score, a comment."""

    rating: str = ""
    score: float | None = None
    comment: str = ""

    def checked(self) -> AnnotationValues:
        rating = (self.rating or "").strip().lower()
        if rating not in ("", *Rating.values):
            raise InvalidRequestError(
                f"rating must be pass or fail (or empty for none), got {self.rating!r}"
            )
        score = self.score
        if score is not None:
            if isinstance(score, bool) or not isinstance(score, int | float):
                raise InvalidRequestError(f"score must be a number from 0 to 1, got {score!r}")
            if not math.isfinite(score) or not 0.0 <= score <= 1.0:
                raise InvalidRequestError(f"score must be a number from 0 to 1, got {score!r}")
            score = float(score)
        comment = self.comment or ""
        if len(comment) > MAX_COMMENT:
            raise InvalidRequestError(
                f"a comment holds at most {MAX_COMMENT:,} characters, got {len(comment):,}"
            )
        if "\x00" in comment:
            raise InvalidRequestError("a comment cannot contain the NUL character")
        return AnnotationValues(rating=rating, score=score, comment=comment)


def _author(user: Actor, given: str | None) -> str:
    return author_of(
        user, given, refusal="annotating a case needs a signed-in account with the runner role"
    )


def case_annotation_save(
    *,
    user: Actor,
    run: Run,
    case_id: str,
    values: AnnotationValues,
    author_name: str | None = None,
) -> CaseAnnotation:
    """Set `user`'s annotation of one case of `run` (made, or edited), keeping the change.

    Needs the runner role in the run's project. Saving what is already there changes
    nothing and adds no change to the trail.
    """
    if not user.is_authenticated:
        raise NotPermittedError("annotating a case needs a signed-in account with the runner role")
    role_require(user=user, project=run.project, role=Role.RUNNER, action="annotating a case")
    author = _author(user, author_name)
    checked = values.checked()
    if not CaseResult.objects.filter(run=run, case_id=case_id).exists():
        raise case_not_found(run, case_id)
    with transaction.atomic():
        annotation, created = CaseAnnotation.objects.select_for_update().get_or_create(
            run=run,
            case_id=case_id,
            author_name=author,
            defaults={
                "author": account_of(user),
                "rating": checked.rating,
                "score": checked.score,
                "comment": checked.comment,
            },
        )
        if not created:
            if _values_of(annotation) == checked:
                return annotation
            annotation.rating, annotation.score = checked.rating, checked.score
            annotation.comment = checked.comment
            annotation.save(update_fields=["rating", "score", "comment", "updated_at"])
        _change_append(annotation)
    return annotation


def _values_of(annotation: CaseAnnotation) -> AnnotationValues:
    return AnnotationValues(
        rating=annotation.rating, score=annotation.score, comment=annotation.comment
    )


def _change_append(annotation: CaseAnnotation) -> CaseAnnotationChange:
    version = CaseAnnotationChange.objects.filter(annotation=annotation).count() + 1
    return CaseAnnotationChange.objects.create(
        annotation=annotation,
        version=version,
        run_id=annotation.run_id,
        case_id=annotation.case_id,
        author_name=annotation.author_name,
        rating=annotation.rating,
        score=annotation.score,
        comment=annotation.comment,
    )
