"""The one builder of an engine `Result` from a recorded run.

Everything that hands a recorded run back to the engine (baselines for gates,
finalising a worker's run, comparisons, `oloproof run --submit --wait`) reads it
here. `with_content=False` leaves out inputs, outputs, feedback and tracebacks:
a paired comparison reads only each verdict's value, so comparing two large runs
reads narrow columns instead of whole cases.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import oloproof_core as engine
from metrics.models import CaseVerdict, MetricEstimate
from metrics.selectors import run_metric_estimates
from runs.models import CaseResult, DatasetCase, Label, Run
from runs.selectors.case_repeats import run_repeats
from runs.selectors.transcripts import run_transcripts

_BLOCK = 5000
"""Rows fetched per round trip while streaming a run's tables."""


def run_result(
    *, run: Run, with_content: bool = True, with_transcripts: bool = False
) -> engine.Result:
    """The run's metrics, cases with verdicts, gate and provenance, as the engine's Result.

    Three streamed reads (cases, dataset rows, verdicts) whatever the run's size, and
    with content, where the project has labels, the metrics' labels (`Result.labels`).
    `with_transcripts` (with content) adds each case's transcript (`CaseResult.trace`), a
    fourth read: a run read back whole (`oloproof.load`) is the run that was recorded.
    """
    cases = {item["id"]: item for item in _case_items(run, with_content)}
    _add_dataset_rows(run, cases, with_content)
    _add_verdicts(run, cases, with_content)
    if with_content and with_transcripts:
        for case_id, transcript in run_transcripts(run_id=run.pk):
            if case_id in cases:
                cases[case_id]["trace"] = transcript
    data: dict[str, Any] = {
        "run_id": str(run.pk),
        "provenance": _provenance(run) if with_content else _release_only(run),
        "metrics": [metric_dict(row) for row in run_metric_estimates(run_id=run.pk)],
        "cases": list(cases.values()),
    }
    gate = getattr(run, "gate", None)
    if gate is not None:
        data["gate"] = {"outcome": gate.outcome, "summary": gate.summary, "rules": gate.rules}
    result = engine.result_from_dict(data)
    if with_content and Label.objects.filter(project_id=run.project_id).exists():
        # People's labels key on the cases' content, so a narrow read has none to match.
        # Imported here: the labels' reads reach the comparisons, which read this module.
        from runs.selectors.result_labels import run_result_labels

        result.labels = run_result_labels(run=run)
    return result


def metric_dict(row: MetricEstimate) -> dict[str, Any]:
    """A recorded estimate in the engine's result-file shape."""
    return {
        "metric": row.metric,
        "criterion": row.criterion,
        "estimate": row.estimate,
        "interval": {"lower": row.lower, "upper": row.upper},
        "n_observed": row.n_observed,
        "n_missing": row.n_missing,
        "method": row.method,
        "confidence": row.confidence,
        "value_type": row.value_type,
        "score_range": row.score_range if len(row.score_range) == 2 else [0.0, 1.0],
        "n_clusters": row.n_clusters,
        "warning": row.warning or None,
    }


def _provenance(run: Run) -> dict[str, Any]:
    return dict(run.provenance or {}) or _release_only(run)


def _release_only(run: Run) -> dict[str, Any]:
    system = run.release.system.name if run.release is not None else "unnamed"
    version = run.release.version if run.release is not None else ""
    return {"system": {"name": system, "version": version}}


def _streamed(query: Any) -> Iterator[Any]:
    return iter(query.iterator(chunk_size=_BLOCK))


def _case_items(run: Run, with_content: bool) -> Iterator[dict[str, Any]]:
    rows = CaseResult.objects.filter(run=run).order_by("position", "id")
    if not with_content:
        for case_id in _streamed(rows.values_list("case_id", flat=True)):
            yield {"id": case_id, "input": {}, "verdicts": {}}
        return
    columns = (
        "case_id",
        "output",
        "error_type",
        "error_message",
        "error_traceback",
        "latency_ms",
        "artifacts",
        "model_calls",
    )
    # A repeat's index is kept in its id (`q17#r2`), which is all the store records of it.
    repeated = run_repeats(run=run) > 1
    for case_id, output, error_type, message, trace, latency, artifacts, calls in _streamed(
        rows.values_list(*columns)
    ):
        error = {"type": error_type, "message": message, "traceback": trace}
        yield {
            "id": case_id,
            "input": {},
            "output": output,
            "error": error if error_type else None,
            "latency_ms": latency,
            "artifacts": artifacts,
            "model_calls": calls,
            "verdicts": {},
            **({"repeat": engine.repeat_of(case_id)} if repeated else {}),
        }


def _add_dataset_rows(run: Run, cases: dict[str, dict[str, Any]], with_content: bool) -> None:
    if run.dataset_id is None:
        return
    rows = DatasetCase.objects.filter(dataset_id=run.dataset_id)
    if not with_content:
        for case_id, cluster in _streamed(
            rows.filter(cluster__isnull=False).values_list("case_id", "cluster")
        ):
            if case_id in cases:
                cases[case_id]["cluster"] = cluster
        return
    columns = ("case_id", "input", "expected", "split", "cluster")
    for case_id, input_, expected, split, cluster in _streamed(rows.values_list(*columns)):
        item = cases.get(case_id)
        if item is not None:
            item.update(input=input_, expected=expected, split=split, cluster=cluster)


def _add_verdicts(run: Run, cases: dict[str, dict[str, Any]], with_content: bool) -> None:
    rows = CaseVerdict.objects.filter(run_id=run.pk)
    if not with_content:
        for case_id, criterion, value, scores, error in _streamed(
            rows.values_list("case_id", "criterion", "value", "scores", "error")
        ):
            item = cases.get(case_id)
            if item is not None:
                item["verdicts"][criterion] = {
                    "value": value,
                    "scores": scores,
                    "error": error or _missing_reason(value),
                }
        return
    columns = (
        "case_id",
        "criterion",
        "value",
        "feedback",
        "scores",
        "error",
        "error_traceback",
        "cached",
    )
    for case_id, criterion, value, feedback, scores, error, trace, cached in _streamed(
        rows.values_list(*columns)
    ):
        item = cases.get(case_id)
        if item is not None:
            item["verdicts"][criterion] = {
                "value": value,
                "feedback": feedback,
                "scores": scores,
                "error": error,
                "traceback": trace,
                "cached": cached,
            }


def _missing_reason(value: float | None) -> str | None:
    return "missing" if value is None else None
