"""One case's transcripts in two runs, read for the compare page: where they first differ."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from oloproof_core.results.compare import StepDifference, first_difference
from runs.models import CaseResult, Run
from runs.selectors.transcripts import readable_step, transcripts_by_case


@dataclass(frozen=True, slots=True)
class ComparedTranscripts:
    """The case's transcript on each side (None: none kept), the first step that differs
    (None: the same conversation, figures aside) and the steps both had before it."""

    case_id: str
    in_baseline: bool
    in_candidate: bool
    baseline: dict[str, Any] | None
    candidate: dict[str, Any] | None
    difference: StepDifference | None
    shared_steps: list[dict[str, Any]]
    baseline_step: dict[str, Any] | None
    candidate_step: dict[str, Any] | None


def case_transcripts_compare(*, baseline: Run, candidate: Run, case_id: str) -> ComparedTranscripts:
    """The case's transcripts in two runs the caller has read through access."""
    present = set(
        CaseResult.objects.filter(run__in=[baseline, candidate], case_id=case_id).values_list(
            "run_id", flat=True
        )
    )
    old = transcripts_by_case(run_id=baseline.pk, case_ids=[case_id]).get(case_id)
    new = transcripts_by_case(run_id=candidate.pk, case_ids=[case_id]).get(case_id)
    difference = first_difference(old, new) if (old or new) else None
    shared = (old or {}).get("steps") or []
    if difference is not None:
        shared = shared[: difference.same_before]
    number = difference.number if difference is not None else 0
    return ComparedTranscripts(
        case_id=case_id,
        in_baseline=baseline.pk in present,
        in_candidate=candidate.pk in present,
        baseline=old,
        candidate=new,
        difference=difference,
        shared_steps=[readable_step(index, step) for index, step in enumerate(shared, 1)],
        baseline_step=_step(number, difference.baseline if difference else None),
        candidate_step=_step(number, difference.candidate if difference else None),
    )


def _step(number: int, step: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if step is None else readable_step(number, step)
