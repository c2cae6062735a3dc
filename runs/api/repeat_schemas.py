"""A compared case's status against its own noise, when the runs repeated their cases."""

from ninja import Schema


class RepeatSideOut(Schema):
    repeats: int
    passes: int | None
    mean: float | None


class RepeatEvidenceOut(Schema):
    status: str
    evidence: str
    baseline: RepeatSideOut
    candidate: RepeatSideOut
    p_value: float | None
    adjusted_p_value: float | None


class RepeatCaseOut(Schema):
    """The case a compared row is a repeat of: regressed or improved only beyond its noise
    (exact test per case, Tarone–Holm across cases), else flaky, changed, stable_pass,
    stable_fail, unchanged or missing; per metric the evidence."""

    case_id: str
    status: str
    repeat_ids: list[str]
    metrics: dict[str, RepeatEvidenceOut]
