"""The result of one run: metrics, cases, provenance and (with a policy) the gate."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from oloproof_core._util.text_files import text_written
from oloproof_core.cases.case import CaseResult
from oloproof_core.cases.usage import RoleUsage, usage_by_role
from oloproof_core.results.columns.case_columns import CaseColumns
from oloproof_core.results.head import RESULT_FORMAT

if TYPE_CHECKING:  # the statistics (scipy) load only when a run aggregates
    from oloproof_core.labels import Calibration, LabelledEstimate, MetricLabels
    from oloproof_core.results.estimate import MetricEstimate


@dataclass(slots=True)
class Result:
    metrics: list[MetricEstimate]
    cases: Sequence[CaseResult]
    """Every case whole, slimmed (`CaseResult.without_payload`), or as columns
    (`CaseColumns`: what a conclusion reads of a large run)."""
    provenance: dict[str, Any]
    gate: Any = None
    run_id: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    labels: dict[str, MetricLabels] = field(default_factory=dict)
    """People's labels per metric, where the run's store has them (see `labelled`)."""

    def metric(self, name: str) -> MetricEstimate:
        for metric in self.metrics:
            if metric.metric == name:
                return metric
        known = ", ".join(m.metric for m in self.metrics)
        raise KeyError(f"no metric {name!r} in this run; metrics: {known}")

    def labelled(self, metric: str, confidence: float | None = None) -> LabelledEstimate | None:
        """The metric's figure from judge verdicts and people's labels of the queue's draws.

        None until the first draw is labelled: the metric's own interval then assumes
        its judge is right.
        """
        if metric not in self.labels:  # nothing to combine: the statistics stay unloaded
            return None
        from oloproof_core.labels import labelled_figure

        return labelled_figure(self, metric, self._level(metric, confidence))

    def calibration(self, metric: str, confidence: float | None = None) -> Calibration | None:
        """How far the metric's judge agrees with people on the labelled cases."""
        if metric not in self.labels:  # nothing to combine: the statistics stay unloaded
            return None
        from oloproof_core.labels import judge_calibration

        return judge_calibration(self, metric, self._level(metric, confidence))

    def people_agreement(self, metric: str, confidence: float | None = None) -> Calibration | None:
        """How far people agree with each other where two labelled one case."""
        if metric not in self.labels:  # nothing to combine: the statistics stay unloaded
            return None
        from oloproof_core.labels import people_agreement

        return people_agreement(self, metric, self._level(metric, confidence))

    def _level(self, metric: str, confidence: float | None) -> float:
        return self.metric(metric).confidence if confidence is None else confidence

    @property
    def n_cases(self) -> int:
        return len(self.cases)

    @property
    def failed_cases(self) -> list[CaseResult]:
        """Cases whose system raised, timed out or returned something unusable."""
        return [case for case in self.cases if case.error is not None]

    def error_summary(self) -> list[tuple[str, int, str]]:
        """(error type, count, first case id) for the system's failures, most frequent first."""
        counts = Counter(case.error.type for case in self.cases if case.error is not None)
        first: dict[str, str] = {}
        for case in self.cases:
            if case.error is not None:
                first.setdefault(case.error.type, case.id)
        return [(kind, count, first[kind]) for kind, count in counts.most_common()]

    def usage(self) -> dict[str, RoleUsage]:
        """The run's model usage by role (system, judge, metric, ...), over every case."""
        if isinstance(self.cases, CaseColumns):
            return {role: replace(figures) for role, figures in self.cases.model_usage.items()}
        return usage_by_role(call for case in self.cases for call in case.measurements.model_calls)

    def to_dict(self, *, include_cases: bool = True) -> dict[str, Any]:
        gate = self.gate.to_dict() if self.gate is not None else None
        data: dict[str, Any] = {
            "format": RESULT_FORMAT,
            "run_id": self.run_id,
            "metrics": [metric.to_dict() for metric in self.metrics],
            "gate": gate,
            "provenance": self.provenance,
        }
        measured = _measured(self)
        if measured:
            data["measured"] = measured
        if include_cases:
            data["cases"] = [case.to_dict() for case in self.cases]
        if self.labels:
            data["labels"] = {name: labels.to_dict() for name, labels in self.labels.items()}
        return data

    def to_json(self, path: str | None = None, *, indent: int | None = 2) -> str:
        text = json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, default=str)
        if path is not None:
            with text_written(path, what="the result") as handle:
                handle.write(text + "\n")
        return text

    def __str__(self) -> str:
        from oloproof_core.results.report import render_text

        return render_text(self)

    def _repr_html_(self) -> str:
        from oloproof_core.results.report import render_html

        return render_html(self)


def _measured(result: Result) -> list[dict[str, Any]]:
    """Latency and cost figures with their intervals, where the cases carry measurements."""
    concluded = result.provenance.get("measured")
    if isinstance(concluded, list):
        return concluded
    from oloproof_core.results.measured_text import measured_dicts

    return measured_dicts(result)


def metrics_by_name(metrics: Sequence[MetricEstimate]) -> dict[str, MetricEstimate]:
    return {metric.metric: metric for metric in metrics}
