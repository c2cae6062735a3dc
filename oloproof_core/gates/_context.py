"""What the rules of a policy look at while deciding one run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from oloproof_core.aggregate import MetricEstimate, estimate_metric
from oloproof_core.compare._values import values_by_case
from oloproof_core.gates._errors import PolicyError

if TYPE_CHECKING:
    from oloproof_core.compare import Comparison
    from oloproof_core.result import Result


@dataclass(slots=True)
class DecisionContext:
    """The run, the confidence level of the decision and (if any) the baseline run.

    Estimates are re-derived from the case verdicts when the policy asks for a
    confidence level other than the run's, so a rule always reads intervals at the
    level the policy states.
    """

    result: Result
    confidence: float
    baseline: Result | None = None
    baseline_label: str | None = None
    _comparison: Comparison | None = field(default=None, repr=False)
    _estimates: dict[str, MetricEstimate] = field(default_factory=dict, repr=False)

    def has_metric(self, name: str) -> bool:
        return any(metric.metric == name for metric in self.result.metrics)

    def metric_names(self) -> list[str]:
        return [metric.metric for metric in self.result.metrics]

    def estimate(self, name: str) -> MetricEstimate:
        if name in self._estimates:
            return self._estimates[name]
        stored = self.result.metric(name)
        estimate = stored if stored.confidence == self.confidence else self._recompute(stored)
        self._estimates[name] = estimate
        return estimate

    def values(self, name: str) -> list[float | None]:
        """Per-case values of a metric (None where missing), in case order."""
        stored = self.result.metric(name)
        return list(values_by_case(self.result, stored).values())

    def _recompute(self, stored: MetricEstimate) -> MetricEstimate:
        if not self.result.cases:
            raise PolicyError(
                f"the policy's confidence {self.confidence} differs from the run's "
                f"{stored.confidence}, and this result carries no cases to recompute "
                f"{stored.metric!r} from; save the result with its cases or drop "
                "'confidence' from the policy"
            )
        return estimate_metric(
            stored.metric,
            stored.criterion,
            self.values(stored.metric),
            stored.value_type,
            stored.score_range,
            self.confidence,
        )

    def comparison(self) -> Comparison:
        if self.baseline is None:
            raise PolicyError("a no_regression rule needs a baseline run")
        if self._comparison is None:
            from oloproof_core.compare import compare_runs

            self._comparison = compare_runs(self.baseline, self.result, confidence=self.confidence)
        return self._comparison
