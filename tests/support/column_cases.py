"""Judged cases of every kind a conclusion reads, and the two ways of concluding them:
from the cases whole and from their value columns (`oloproof_core.CaseColumns`)."""

from __future__ import annotations

import random
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

import oloproof_core as engine
from oloproof_core.cases.case import CaseError, CaseResult
from oloproof_core.cases.observations import Measurements, ModelCall
from oloproof_core.cases.verdict import Verdict
from oloproof_core.judging.evaluators import ExactMatch, evaluator
from tests.support.synthetic_runs import make_run


@evaluator(criterion="quality", value_type="score", score_range=(0.0, 5.0))
def quality(case: Any) -> float:  # never called: the cases come judged
    return 0.0


EVALUATORS = [ExactMatch(criterion="exact", field="label"), quality]


def judged_cases(n: int, seed: int) -> list[CaseResult]:
    """Cases as a run leaves them: failures, missing verdicts, clusters (some none),
    sub-scores that first appear late, model calls of two roles."""
    draw = random.Random(seed)
    cases = []
    for i in range(n):
        case = CaseResult(
            id=f"case_{i:05d}",
            input={"question": "x" * 50},
            expected={"label": "refund"},
            cluster=None if i % 5 == 0 else f"user_{draw.randrange(9)}",
            output={"label": "refund"},
        )
        if i % 23 == 7:
            case.error = CaseError("TimeoutError", "too slow", "trace")
            case.verdicts = {
                name: Verdict.failed_to_judge("not judged") for name in ("exact", "quality")
            }
        else:
            case.verdicts["exact"] = Verdict(value=float(draw.random() < 0.85), feedback="f")
            scores = {"tone": round(draw.uniform(0, 5), 2)}
            if i >= 11 and i % 3:
                scores["facts"] = round(draw.uniform(0, 5), 2)
            missing = i % 31 == 4
            case.verdicts["quality"] = (
                Verdict.failed_to_judge("judge down")
                if missing
                else Verdict(value=round(draw.uniform(1, 5), 3), scores=scores)
            )
        if i % 4 == 0:
            case.measurements = Measurements(
                model_calls=[
                    ModelCall("system", "m", 10 + i % 7, 3, 0.001, 12.5),
                    ModelCall("judge", "j", 5, 1, None if i == 8 else 0.0002, 3.0),
                ]
            )
        cases.append(case)
    return cases


CRITERIA = ("exact", "quality")


def as_columns(cases: list[CaseResult], *, spill: bool = False) -> engine.CaseColumns:
    """The columns of `cases`, built row by row as the platform's reader builds them;
    with `spill`, kept in files as a worker keeps them: the ids left to the store
    (`DeferredIds`) and the score columns read again in reading order, as the store
    sorts them by their ids' digests."""
    builder = engine.CaseColumnsBuilder(CRITERIA, spill=spill)
    for case in cases:
        builder.add(
            case.id,
            cluster=case.cluster,
            error_type=None if case.error is None else case.error.type,
            verdicts=_verdicts(case),
            model_calls=[asdict(call) for call in case.measurements.model_calls],
            latency_ms=case.latency_ms,
            cost_usd=case.cost_usd,
        )
    if not spill:
        return builder.build()
    ids = [case.id for case in cases]
    reading = engine.ReadingOrderBuilder(
        CRITERIA, whole=["quality"], sub_scores=builder.sub_scores()
    )
    for place in engine.stats.ReadOrder.of(ids).indices.tolist():
        reading.add(place, _verdicts(cases[place]))
    return builder.build(engine.DeferredIds(lambda: list(ids), builder.count), reading.build())


def _verdicts(case: CaseResult) -> list[tuple[float | None, dict[str, float]]]:
    return [(case.verdicts[c].value, dict(case.verdicts[c].scores)) for c in CRITERIA]


POLICY: dict[str, Any] = {
    "version": 1,
    "confidence": 0.9,  # not the run's: the figures are worked out again from the values
    "rules": [
        {"metric": "exact", "min": 0.84},  # undecided: its readout reads values and clusters
        {"metric": "quality", "min": 1.5},
        {"metric": "quality.facts", "max": 4.6},
        {"missing": {"max_count": 40}},
        {"metric": "quality", "missing": {"max_rate": 0.05}},
        {"metric": "exact", "no_regression": {"margin": 0.5}},
    ],
}


def conclude(
    cases: Any, *, policy: dict[str, Any] | None = POLICY, digest: str = "d"
) -> engine.Result:
    """The run's conclusion, against a baseline whose `exact` fails every seventh case."""
    plan = engine.plan_run(system=lambda item: item, evaluators=EVALUATORS, policy=policy)
    n = len(cases)
    baseline = make_run(
        {"exact": [float(i % 7 != 0) for i in range(n)]}, ids=[f"case_{i:05d}" for i in range(n)]
    )
    dataset = engine.Dataset(source="data.jsonl", rows=[], digest=digest)
    return engine.conclude_run(
        plan, cases, dataset, engine.InMemoryStore(), started_at=datetime(2026, 1, 1, tzinfo=UTC),
        duration_s=1.0, baseline=baseline,
    )  # fmt: skip


def figures(result: engine.Result) -> dict[str, Any]:
    """What a conclusion says, but for when it finished."""
    provenance = {k: v for k, v in result.provenance.items() if k != "finished_at"}
    return {
        "metrics": [metric.to_dict() for metric in result.metrics],
        "gate": None if result.gate is None else result.gate.to_dict(),
        "provenance": provenance,
    }
