"""Reading a result back from the JSON that `Result.to_json` wrote (baselines, comparisons).

Such a file starts with `{"format": "oloproof-result/1", ...` (`RESULT_FORMAT`); one
written before that key existed starts with `{"run_id": ..., "metrics": ...`. Both load,
and `looks_like_result` tells either from other JSON by its first bytes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from oloproof_core._util.text_files import read_text
from oloproof_core.cases.case import CaseError, CaseResult
from oloproof_core.cases.observations import Measurements, ModelCall
from oloproof_core.cases.transcript import Transcript
from oloproof_core.cases.verdict import Verdict
from oloproof_core.errors import OloproofError
from oloproof_core.results.estimate import MetricEstimate
from oloproof_core.results.head import RESULT_FORMAT, RESULT_HEAD_BYTES, looks_like_result
from oloproof_core.results.result import Result
from oloproof_core.results.shape import result_shape_problem
from oloproof_core.stats import Interval

__all__ = [
    "RESULT_FORMAT",
    "RESULT_HEAD_BYTES",
    "load_result",
    "looks_like_result",
    "result_from_dict",
]


def load_result(path: str) -> Result:
    if os.path.isdir(path):
        raise OloproofError(f"{path}: a folder, not a result file written by 'oloproof run --json'")
    text = read_text(path, what="result file")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise OloproofError(f"{path}:{exc.lineno}: not a result JSON file: {exc.msg}") from None
    except RecursionError:
        # json's decoder recurses per level: a file nested thousands deep is not a result.
        raise OloproofError(
            f"{path}: not a result JSON file: its values are nested too deeply"
        ) from None
    problem = result_shape_problem(data)
    if problem is not None:
        raise OloproofError(f"{path}: not a result written by oloproof (--json): {problem}")
    try:
        return result_from_dict(data)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise OloproofError(
            f"{path}: not a result written by oloproof (--json): missing or malformed {exc}"
        ) from None


def result_from_dict(data: Mapping[str, Any]) -> Result:
    metrics = [_metric(item) for item in data["metrics"]]
    cases = [_case(item) for item in data.get("cases", [])]
    result = Result(
        metrics=metrics, cases=cases, provenance=dict(data["provenance"]), run_id=data.get("run_id")
    )
    if data.get("gate") is not None:
        result.extras["gate"] = data["gate"]
    if data.get("labels"):
        from oloproof_core.labels import MetricLabels

        result.labels = {
            name: MetricLabels.from_dict(item) for name, item in data["labels"].items()
        }
    return result


def _metric(item: Mapping[str, Any]) -> MetricEstimate:
    interval = item["interval"]
    low, high = item["score_range"]
    return MetricEstimate(
        metric=item["metric"],
        estimate=item["estimate"],
        interval=Interval(float(interval["lower"]), float(interval["upper"])),
        n_observed=int(item["n_observed"]),
        n_missing=int(item["n_missing"]),
        method=item["method"],
        confidence=float(item["confidence"]),
        value_type=item["value_type"],
        score_range=(float(low), float(high)),
        criterion=item.get("criterion", item["metric"].split(".")[0]),
        n_clusters=item.get("n_clusters"),
        warning=item.get("warning"),
    )


def _case(item: Mapping[str, Any]) -> CaseResult:
    error = item.get("error")
    case = CaseResult(
        id=item["id"],
        input=item["input"],
        expected=item.get("expected"),
        split=item.get("split"),
        cluster=item.get("cluster"),
        output=item.get("output"),
        error=None
        if error is None
        else CaseError(error["type"], error["message"], error.get("traceback", "")),
        artifacts=dict(item.get("artifacts") or {}),
        measurements=Measurements(
            latency_ms=item.get("latency_ms"),
            model_calls=[ModelCall(**call) for call in item.get("model_calls") or []],
        ),
        repeat=int(item.get("repeat") or 0),
        trace=Transcript.from_dict(item["trace"]) if item.get("trace") else None,
    )
    for name, verdict in (item.get("verdicts") or {}).items():
        case.verdicts[name] = Verdict(
            value=verdict["value"],
            feedback=verdict.get("feedback"),
            scores=dict(verdict.get("scores") or {}),
            error=verdict.get("error"),
            traceback=verdict.get("traceback"),
            cached=bool(verdict.get("cached")),
        )
    return case
