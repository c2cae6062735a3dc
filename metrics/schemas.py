"""What the metrics API returns; every field listed explicitly."""

from __future__ import annotations

from typing import Any

from ninja import Schema


class MetricOut(Schema):
    metric: str
    criterion: str
    estimate: float | None
    lower: float
    upper: float
    method: str
    confidence: float
    n_observed: int
    n_missing: int
    value_type: str
    score_range: list[float]
    is_sub_score: bool
    evaluator_version: str | None

    @staticmethod
    def resolve_evaluator_version(estimate: Any) -> str | None:
        return None if estimate.evaluator is None else estimate.evaluator.version


class EvaluatorOut(Schema):
    id: int
    criterion: str
    kind: str
    version: str
    source: str | None
    reads: list[str]
    parameters: dict[str, Any]
    value_type: str
    score_range: list[float]


class CaseVerdictOut(Schema):
    """One criterion's verdict on a case, as the case pages of the API show it."""

    criterion: str
    value: float | None
    feedback: str | None
    scores: dict[str, float]
    error: str | None
    cached: bool


class VerdictOut(CaseVerdictOut):
    case_id: str
