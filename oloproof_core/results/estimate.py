"""One metric of a run: its estimate and honest interval, what every reader of a run takes.

Made by the aggregation (`evaluation.aggregate`) and read by the result, its report,
the columns, the comparisons and the labels, none of which need the aggregation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from oloproof_core.stats import Interval


@dataclass(frozen=True, slots=True)
class MetricEstimate:
    """One metric of a run.

    `estimate` is computed over the observed verdicts and is None when nothing was
    observed; `interval` covers every way the `n_missing` cases could have gone.
    `n_clusters` counts the clusters of a clustered dataset (None otherwise);
    `warning` says what a reader must know before trusting the interval (e.g. too
    few clusters), and the CLI table and the dashboard print it.
    """

    metric: str
    estimate: float | None
    interval: Interval
    n_observed: int
    n_missing: int
    method: str
    confidence: float
    value_type: str
    score_range: tuple[float, float]
    criterion: str
    n_clusters: int | None = None
    warning: str | None = None

    @property
    def is_sub_score(self) -> bool:
        return self.metric != self.criterion

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "criterion": self.criterion,
            "estimate": self.estimate,
            "interval": {"lower": self.interval.lower, "upper": self.interval.upper},
            "n_observed": self.n_observed,
            "n_missing": self.n_missing,
            "method": self.method,
            "confidence": self.confidence,
            "value_type": self.value_type,
            "score_range": list(self.score_range),
            "n_clusters": self.n_clusters,
            "warning": self.warning,
        }
