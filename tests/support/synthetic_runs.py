"""Results built directly from per-case values, for tests of gates and comparisons."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from oloproof_core.cases.case import CaseError, CaseResult
from oloproof_core.cases.verdict import Verdict
from oloproof_core.evaluation.aggregate import estimate_metric
from oloproof_core.results.estimate import MetricEstimate
from oloproof_core.results.result import Result

Values = Sequence[float | None]


def make_run(
    criteria: Mapping[str, Values],
    *,
    value_types: Mapping[str, str] | None = None,
    sub_scores: Mapping[str, Mapping[str, Values]] | None = None,
    ids: Sequence[str] | None = None,
    clusters: Sequence[str | None] | None = None,
    system: tuple[str, str] = ("support-bot", "1"),
    confidence: float = 0.95,
    run_id: str | None = None,
) -> Result:
    """A run whose criterion `name` has value `criteria[name][i]` on case i (None: missing).

    Pass/fail unless `value_types` says "score" (range [0, 1]).
    """
    value_types = value_types or {}
    sub_scores = sub_scores or {}
    n = len(next(iter(criteria.values())))
    ids = list(ids) if ids is not None else [f"case_{i:04d}" for i in range(n)]
    cases = []
    for i, case_id in enumerate(ids):
        case = CaseResult(
            id=case_id,
            input={"i": i},
            expected=None,
            cluster=None if clusters is None else clusters[i],
        )
        for name, values in criteria.items():
            value = values[i]
            scores = {
                sub: float(v[i]) for sub, v in sub_scores.get(name, {}).items() if v[i] is not None
            }
            case.verdicts[name] = (
                Verdict.failed_to_judge("boom")
                if value is None
                else Verdict(value=float(value), scores=scores)
            )
        if all(values[i] is None for values in criteria.values()):
            case.error = CaseError("RuntimeError", "system failed")
        cases.append(case)
    metrics: list[MetricEstimate] = []
    for name, values in criteria.items():
        kind = value_types.get(name, "pass_fail")
        metrics.append(
            estimate_metric(name, name, list(values), kind, (0.0, 1.0), confidence, keys=ids)
        )
        for sub, sub_values in sub_scores.get(name, {}).items():
            masked = [None if values[i] is None else sub_values[i] for i in range(n)]
            metrics.append(
                estimate_metric(f"{name}.{sub}", name, masked, "score", (0.0, 1.0), confidence)
            )
    provenance = {
        "system": {"name": system[0], "version": system[1]},
        "dataset": {"source": "<synthetic>", "n_cases": n},
        "confidence": confidence,
    }
    return Result(metrics=metrics, cases=cases, provenance=provenance, run_id=run_id)


def pass_fail(passes: int, fails: int, missing: int = 0) -> list[float | None]:
    return [1.0] * passes + [0.0] * fails + [None] * missing
