"""What the runs API reads and returns; every field listed explicitly."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from urllib.parse import urlencode

from django.urls import reverse
from ninja import Field, Schema

import oloproof_core as engine
from metrics.schemas import CaseVerdictOut
from runs.api.repeat_schemas import RepeatCaseOut
from runs.models import Approval, ApprovalRevocation, CaseResult, Gate, Run


class RunOut(Schema):
    id: int
    project: str
    status: str
    system: str | None
    version: str | None
    dataset_digest: str | None
    dataset_source: str | None
    split: str | None
    cases_total: int
    cases_done: int
    cases_failed: int
    gate_outcome: str | None
    error: str
    created_by: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    duration_s: float | None
    name: str
    tags: list[str]
    hidden: bool

    @staticmethod
    def resolve_system(run: Run) -> str | None:
        return None if run.release is None else run.release.system.name

    @staticmethod
    def resolve_version(run: Run) -> str | None:
        return None if run.release is None else run.release.version

    @staticmethod
    def resolve_dataset_digest(run: Run) -> str | None:
        return None if run.dataset is None else run.dataset.digest

    @staticmethod
    def resolve_dataset_source(run: Run) -> str | None:
        return None if run.dataset is None else run.dataset.source

    @staticmethod
    def resolve_gate_outcome(run: Run) -> str | None:
        # A run without a gate raises RelatedObjectDoesNotExist, an AttributeError.
        gate = getattr(run, "gate", None)
        return None if gate is None else gate.outcome

    @staticmethod
    def resolve_project(run: Run) -> str:
        return run.project.slug

    @staticmethod
    def resolve_created_by(run: Run) -> str | None:
        return None if run.created_by is None else run.created_by.get_username()

    @staticmethod
    def resolve_name(run: Run) -> str:
        keeping = getattr(run, "keeping", None)
        return "" if keeping is None else keeping.name

    @staticmethod
    def resolve_hidden(run: Run) -> bool:
        keeping = getattr(run, "keeping", None)
        return keeping is not None and keeping.hidden_at is not None

    @staticmethod
    def resolve_tags(run: Run) -> list[str]:
        # Prefetched with the history's page (runs_in_order); one query for a single run.
        tags: Any = getattr(run, "tags")  # noqa: B009 - the reverse relation of RunTag
        return sorted(tag.tag for tag in tags.all())


class RevocationOut(Schema):
    approval_id: int
    user: str | None
    reason: str
    created_at: datetime

    @staticmethod
    def resolve_user(revocation: ApprovalRevocation) -> str | None:
        return None if revocation.user is None else revocation.user.get_username()


class ApprovalOut(Schema):
    id: int
    decision: str
    override: bool
    comment: str
    gate_outcome: str
    user: str
    created_at: datetime
    standing: bool
    revocation: RevocationOut | None

    @staticmethod
    def resolve_user(approval: Approval) -> str:
        return approval.user.get_username()

    @staticmethod
    def resolve_revocation(approval: Approval) -> ApprovalRevocation | None:
        return getattr(approval, "revocation", None)

    @staticmethod
    def resolve_standing(approval: Approval) -> bool:
        return getattr(approval, "revocation", None) is None


class RevocationIn(Schema):
    reason: str = Field(..., min_length=1, max_length=10_000)


class GateOut(Schema):
    run_id: int
    outcome: str
    summary: str
    rules: list[dict[str, Any]]
    decided_at: datetime
    approvals: list[ApprovalOut]

    @staticmethod
    def resolve_approvals(gate: Gate) -> list[Approval]:
        return list(
            gate.approvals.select_related("user", "revocation__user").order_by("sequence", "id")
        )


class RunKeepIn(Schema):
    """What to change of a run's keeping; a field left out stays as it is."""

    name: str | None = None
    tags: list[str] | None = None
    hidden: bool | None = None


class RunDetailOut(RunOut):
    config: dict[str, Any]
    provenance: dict[str, Any]
    confidence: float
    policy_digest: str


class RunSubmitIn(Schema):
    config: dict[str, Any] = Field(
        ...,
        description="the keys of a run config file (oloproof.yaml): "
        + "; ".join(
            f"{item.name}{'' if item.required else ' (optional)'}: {item.meaning}"
            for item in engine.RUN_CONFIG_FIELDS
        ),
    )
    base_dir: str = Field(
        ...,
        max_length=1000,
        description="absolute folder on the workers that relative paths and file.py:name "
        "references resolve from; it must lie inside a registered code root of the project",
    )
    project: str | None = Field(
        None,
        max_length=100,
        description="the project's slug; may be left out by a runner of only one project",
    )


class CaseErrorOut(Schema):
    type: str
    message: str
    traceback: str


class CaseOut(Schema):
    case_id: str
    position: int
    input: dict[str, Any] | None
    expected: dict[str, Any] | None
    output: Any
    error: CaseErrorOut | None
    latency_ms: float | None
    cost_usd: float | None
    artifacts: dict[str, Any]
    model_calls: list[dict[str, Any]]
    outcome: str
    verdicts: list[CaseVerdictOut]
    transcript_url: str | None = Field(
        None,
        description="where the case's transcript is read (every model call and step of the "
        "system, docs/agents.md); null when the case has none",
    )

    @staticmethod
    def resolve_transcript_url(case: dict[str, Any]) -> str | None:
        if not case.get("has_transcript"):
            return None
        query = urlencode({"case_id": case["case_id"]})
        return reverse("api:case_transcript", kwargs={"run_id": case["run_id"]}) + "?" + query


class TranscriptOut(Schema):
    """A case's transcript as kept: its steps in order, what the caps cut, what was flagged."""

    case_id: str
    digest: str = Field(description="what the verdict cache keys on (the figures left out)")
    model_calls: int
    steps: list[dict[str, Any]]
    cuts: list[str]
    flags: list[str]


class ApprovalIn(Schema):
    decision: Literal["approve", "reject"]
    comment: str = ""
    override: bool = False


class IntervalOut(Schema):
    lower: float
    upper: float


class MetricComparisonOut(Schema):
    metric: str
    criterion: str
    value_type: str
    score_range: list[float]
    baseline_estimate: float | None
    candidate_estimate: float | None
    difference: float | None
    interval: IntervalOut
    confidence: float
    p_value: float | None
    p_value_method: str | None = None
    method: str
    n_pairs: int
    n_missing_pairs: int
    n_clusters: int | None
    n_complete: int | None = None
    q_value: float | None = None
    flag: str | None = None
    warning: str | None = None
    explanation: list[str] = Field(default_factory=list)
    regressed: list[str]
    improved: list[str]


ONCE_EACH: dict[str, int | str] = {"baseline": 1, "candidate": 1}


class ComparisonOut(Schema):
    baseline_run: int
    candidate_run: int
    baseline: str
    candidate: str
    confidence: float
    n_cases: int
    n_common: int
    only_in_baseline: list[str]
    only_in_candidate: list[str]
    metrics_only_in_baseline: list[str]
    metrics_only_in_candidate: list[str]
    cluster_aware: bool
    n_clusters: int | None
    fdr: str | None = None
    metrics: list[MetricComparisonOut]
    repeats: dict[str, int | str] = Field(default_factory=ONCE_EACH.copy)
    """How many times each run ran each case, or "auto" (some once, some more)."""
    paired: str = "cases"
    """What the pairs are: "cases", or "case means" for runs with different repeat counts
    or with `repeats: auto`."""
    repeats_only_in_baseline: int = 0
    repeats_only_in_candidate: int = 0


class SideBySideOut(Schema):
    baseline_run: int
    runs: list[int]
    baseline: str
    candidates: list[str]
    metrics: list[str]
    pairs: list[ComparisonOut]


class MetricChangeOut(Schema):
    baseline: float | None
    candidate: float | None
    change: float | None


class CaseSideOut(Schema):
    output: Any
    error: str | None


class ComparedCaseOut(Schema):
    case_id: str
    status: str
    in_baseline: bool
    in_candidate: bool
    input: Any
    expected: Any
    baseline: CaseSideOut
    candidate: CaseSideOut
    metrics: dict[str, MetricChangeOut]
    baseline_url: str | None
    candidate_url: str | None
    repeat_case: RepeatCaseOut | None = None


CASE_OUTCOMES = (*CaseResult.Outcome.values, "error")
RUN_STATUSES = tuple(Run.Status.values)
GATE_OUTCOMES = (*Gate.Outcome.values, "none")


class AnnotationIn(Schema):
    case_id: str = Field(..., min_length=1, max_length=500)
    rating: Literal["pass", "fail"] | None = Field(
        None, description="pass or fail, your reading of the case; null for none"
    )
    score: float | None = Field(None, ge=0.0, le=1.0, description="from 0 to 1; null for none")
    comment: str = Field("", max_length=10_000)


class AnnotationOut(Schema):
    run_id: int
    case_id: str
    author: str
    rating: str | None
    score: float | None
    comment: str
    created_at: datetime
    updated_at: datetime

    @staticmethod
    def resolve_author(annotation: Any) -> str:
        return str(annotation.author_name)

    @staticmethod
    def resolve_rating(annotation: Any) -> str | None:
        return annotation.rating or None


class AnnotationChangeOut(Schema):
    case_id: str
    author: str
    version: int
    rating: str | None
    score: float | None
    comment: str
    changed_at: datetime

    @staticmethod
    def resolve_author(change: Any) -> str:
        return str(change.author_name)

    @staticmethod
    def resolve_rating(change: Any) -> str | None:
        return change.rating or None
