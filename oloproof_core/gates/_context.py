"""What the rules of a policy look at while deciding one run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from oloproof_core.evaluation.aggregate import estimate_metric
from oloproof_core.evaluation.case_weighted import case_weighted_metric
from oloproof_core.evaluation.repeats import case_id_of, tries_vary
from oloproof_core.gates._errors import PolicyError
from oloproof_core.gates._outcome import MoreCases
from oloproof_core.results.columns.case_columns import CaseColumns
from oloproof_core.results.compare._values import values_listed
from oloproof_core.results.estimate import MetricEstimate
from oloproof_core.stats import Interval, case_means, running_interval

FloatArray = npt.NDArray[np.float64]

if TYPE_CHECKING:
    from collections.abc import Sequence

    from oloproof_core.labels import LabelledEstimate
    from oloproof_core.results.compare import Comparison
    from oloproof_core.results.result import Result


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
    horizon: int | None = None
    """Sequential gate: the number of cases that may be run (intervals are anytime-valid)."""
    effect: float = 0.05
    readouts: bool = True
    """Whether undecided rules compute their sample-size readouts (costly for scores)."""
    planner: Callable[[object], dict[str, Any] | None] | None = None
    """A rule's line of `oloproof plan` for this run (`Policy.decide` gives it)."""
    _comparison: Comparison | None = field(default=None, repr=False)
    _estimates: dict[str, MetricEstimate] = field(default_factory=dict, repr=False)
    _at_level: dict[tuple[str, float], Interval] = field(default_factory=dict, repr=False)
    _labelled: dict[tuple[str, float], LabelledEstimate | None] = field(
        default_factory=dict, repr=False
    )

    @property
    def sequential(self) -> bool:
        return self.horizon is not None

    def with_plan(self, rule: object, more: MoreCases) -> MoreCases:
        """`more` with `rule`'s planning figure, the one an undecided rule says."""
        if not self.readouts or self.planner is None:
            return more
        return more.with_plan(self.planner(rule))

    def ids(self) -> Sequence[str]:
        cases = self.result.cases
        if isinstance(cases, CaseColumns):
            return cases.ids
        return [case.id for case in cases]

    def clusters(self) -> list[str]:
        """Each case's cluster, a case without one (or with an empty one) standing alone."""
        cases = self.result.cases
        if isinstance(cases, CaseColumns):
            return [cases.cluster(i) or f"\0{case_id}" for i, case_id in enumerate(cases.ids)]
        return [case.cluster or f"\0{case.id}" for case in cases]

    def cases_missing(self) -> int:
        """How many cases the system failed on or have any verdict missing."""
        cases = self.result.cases
        if isinstance(cases, CaseColumns):
            return cases.missing_anything()
        return sum(
            1
            for case in cases
            if case.error is not None
            or any(verdict.value is None for verdict in case.verdicts.values())
        )

    def interval_for(self, name: str, confidence: float | None = None) -> Interval:
        """The interval a bound rule reads: fixed-size, or anytime-valid when sequential."""
        level = self.confidence if confidence is None else confidence
        key = (name, level)
        if key not in self._at_level:
            self._at_level[key] = self._interval_for(name, level)
        return self._at_level[key]

    def labelled(self, name: str, confidence: float | None = None) -> LabelledEstimate | None:
        """The metric's figure with people's labels, where the run has labelled draws.

        A sequential gate reads its anytime-valid sequence and never this: the labels'
        interval is for a fixed set of cases.
        """
        if self.sequential or name not in self.result.labels:
            return None
        level = self.confidence if confidence is None else confidence
        key = (name, level)
        if key not in self._labelled:
            self._labelled[key] = self.result.labelled(name, level)
        return self._labelled[key]

    def labelled_change(
        self, name: str, confidence: float | None = None
    ) -> LabelledEstimate | None:
        """Candidate minus baseline with both runs' labels, where both have them."""
        if self.sequential or self.baseline is None:
            return None
        from oloproof_core.labels import labelled_change

        level = self.confidence if confidence is None else confidence
        return labelled_change(self.baseline, self.result, name, level)

    def _interval_for(self, name: str, level: float) -> Interval:
        stored = self.result.metric(name)
        labelled = self.labelled(name, level)
        if labelled is not None:
            return labelled.interval
        if self.horizon is None:
            if level == self.confidence:
                return self.estimate(name).interval
            return self._recompute(stored, level).interval
        low, high = stored.score_range
        worst, best = unit_fills(self.values(name), low, high)
        keys: Sequence[str] = self.ids()
        if stored.n_clusters is not None:
            worst, best, keys = self.repeats_as_cases(worst, best, f"decide {name!r}")
        lower, upper = running_interval(worst, best, keys, self.horizon, level)
        return Interval(low + lower * (high - low), low + upper * (high - low))

    def repeats_as_cases(
        self,
        worst: FloatArray,
        best: FloatArray,
        doing: str,
        rows: Sequence[str] | None = None,
        clusters: Sequence[str] | None = None,
    ) -> tuple[FloatArray, FloatArray, list[str]]:
        """A sequential gate's values of repeated cases as each case's mean, the case the
        unit (``stats.case_means``); refused for clusters other than a case's repeats,
        which the run does not add whole, or cases with unequal numbers of repeats.
        ``rows`` and ``clusters`` default to the run's cases and theirs."""
        rows = list(self.ids() if rows is None else rows)
        clusters = list(self.clusters() if clusters is None else clusters)
        cases = [case_id_of(row) for row in rows]
        found = None
        if clusters == cases:  # every cluster a case's repeats, as a repeated run makes them
            found = case_means(worst, best, rows, cases)
        if found is None:
            raise PolicyError(
                f"a sequential gate cannot {doing}: its cases are clustered by the dataset "
                "(or repeated unequally), and the anytime-valid interval needs independent "
                "cases added whole; run it without --until-decided"
            )
        return found

    def judged_by_model(self, name: str) -> bool:
        """Whether the run's provenance says a model gives this metric's verdicts."""
        from oloproof_core.labels import model_judged_criteria

        return self.result.metric(name).criterion in model_judged_criteria(self.result.provenance)

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
        return values_listed(self.result, self.result.metric(name))

    def _recompute(self, stored: MetricEstimate, level: float | None = None) -> MetricEstimate:
        if not self.result.cases:
            raise PolicyError(
                f"the policy's confidence {self.confidence} differs from the run's "
                f"{stored.confidence}, and this result carries no cases to recompute "
                f"{stored.metric!r} from; save the result with its cases or drop "
                "'confidence' from the policy"
            )
        if tries_vary(self.result.provenance):  # `repeats: auto`: over case means
            return case_weighted_metric(self.result, stored, level or self.confidence)
        return estimate_metric(
            stored.metric,
            stored.criterion,
            self.values(stored.metric),
            stored.value_type,
            stored.score_range,
            self.confidence if level is None else level,
            keys=self.ids(),
        )

    def comparison(self, confidence: float | None = None) -> Comparison:
        if self.baseline is None:
            raise PolicyError("a no_regression rule needs a baseline run")
        from oloproof_core.results.compare import compare_runs

        if confidence is not None and confidence != self.confidence:
            return compare_runs(self.baseline, self.result, confidence=confidence)
        if self._comparison is None:
            self._comparison = compare_runs(self.baseline, self.result, confidence=self.confidence)
        return self._comparison


def unit_fills(
    values: list[float | None], low: float, high: float
) -> tuple[FloatArray, FloatArray]:
    """Values mapped onto [0, 1], missing ones at 0 (worst) and at 1 (best)."""
    raw = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    unit = np.clip((raw - low) / (high - low), 0.0, 1.0)
    return np.where(np.isnan(raw), 0.0, unit), np.where(np.isnan(raw), 1.0, unit)
