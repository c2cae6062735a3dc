"""The paired rule: no regression against the baseline beyond a margin."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oloproof_core import stats
from oloproof_core.gates import _format as fmt
from oloproof_core.gates._errors import PolicyError
from oloproof_core.gates._labelled_readouts import labelled_which
from oloproof_core.gates._more_cases import repeats_needed
from oloproof_core.gates._outcome import MoreCases, Outcome, RuleOutcome
from oloproof_core.gates._readouts import readout, short_readout
from oloproof_core.gates._rules import Rule, _level

if TYPE_CHECKING:
    from oloproof_core.gates._context import DecisionContext
    from oloproof_core.results.compare import MetricComparison
    from oloproof_core.stats import Interval


@dataclass(frozen=True, slots=True)
class NoRegressionRule(Rule):
    """Paired against the baseline: candidate − baseline must be ≥ −`margin`."""

    metric: str
    margin: float

    kind = "no_regression"
    needs_baseline = True
    reads_interval = True

    @property
    def label(self) -> str:
        return f"{self.metric} vs baseline ≥ −{fmt.threshold(self.margin)}"

    def validate(self, context: DecisionContext) -> None:
        low, high = self._known_metric(context, self.metric).score_range
        if self.margin > high - low:
            raise PolicyError(
                f"{self.where}: no_regression: margin {fmt.threshold(self.margin)}"
                f" exceeds the width of {self.metric!r}'s range "
                f"[{fmt.threshold(low)}, {fmt.threshold(high)}]; such a rule "
                "could never fail"
            )
        if context.baseline is not None and not context.baseline.metrics:
            raise PolicyError(f"{self.where}: the baseline run has no metrics")

    def _decide(self, interval: Interval) -> Outcome:
        floor = -self.margin
        return (
            "pass"
            if interval.lower >= floor
            else "fail"
            if interval.upper < floor
            else "inconclusive"
        )

    def _paired(
        self, context: DecisionContext, confidence: float | None = None
    ) -> MetricComparison:
        comparison = context.comparison(confidence)
        if not comparison.has_metric(self.metric):
            raise PolicyError(
                f"{self.where}: the baseline run ({context.baseline_label}) has "
                f"no metric {self.metric!r}; compare against a run that "
                "measured it"
            )
        return comparison.metric(self.metric)

    def _interval(self, context: DecisionContext, confidence: float | None = None) -> Interval:
        """The paired interval: fixed-size, or the anytime-valid sequence when sequential."""
        paired = self._paired(context, confidence)
        labelled = context.labelled_change(self.metric, confidence)
        if labelled is not None:
            return labelled.interval
        if context.horizon is None:
            return paired.interval
        worst, best, ids = paired.unit_fills()
        if paired.cluster_aware:
            doing = f"pair {self.metric!r} ({self.where})"
            worst, best, ids = context.repeats_as_cases(
                worst, best, doing, ids, paired.cluster_labels()
            )
        tuning = stats.SCORE_TUNING if paired.value_type == "pass_fail" else stats.DIFFERENCE_TUNING
        level = context.confidence if confidence is None else confidence
        lower, upper = stats.running_interval(
            worst, best, ids, context.horizon, level, tuning=tuning
        )
        span = paired.score_range[1] - paired.score_range[0]
        return stats.Interval(span * (2 * lower - 1), span * (2 * upper - 1))

    def fails_at(self, context: DecisionContext, confidence: float) -> bool:
        return self._decide(self._interval(context, confidence)) == "fail"

    def check(self, context: DecisionContext) -> RuleOutcome:
        paired = self._paired(context)
        interval = self._interval(context)
        labelled = context.labelled_change(self.metric)
        outcome = self._decide(interval)
        figures: dict[str, Any] = {
            "baseline_estimate": paired.baseline_estimate,
            "candidate_estimate": paired.candidate_estimate,
            "difference": paired.difference,
            "lower": interval.lower,
            "upper": interval.upper,
            "margin": self.margin,
            "p_value": paired.p_value,
            "n_pairs": paired.n_pairs,
            "n_missing_pairs": paired.n_missing_pairs,
            "regressed": len(paired.regressed),
            "improved": len(paired.improved),
            "method": paired.method if labelled is None else labelled.method,
            "interval_source": (
                "the paired verdicts"
                if labelled is None
                else f"both runs' verdicts and {labelled.labels_text}"
            ),
            "baseline": context.baseline_label,
        }
        which = labelled_which(labelled, verdicts="verdicts")
        what = (
            f"the paired {_level(context)} interval{which} for {self.metric} (candidate − "
            f"baseline), [{fmt.signed(interval.lower)}, {fmt.signed(interval.upper)}]"
        )
        counts = f"{len(paired.regressed)} regressed, {len(paired.improved)} improved"
        reason, summary, more = self._explain(outcome, paired, what, counts, context)
        return self._outcome(outcome, reason, summary, figures, metric=self.metric, more_cases=more)

    def _explain(
        self,
        outcome: Outcome,
        paired: MetricComparison,
        what: str,
        counts: str,
        context: DecisionContext,
    ) -> tuple[str, str, MoreCases | None]:
        """The rule's reason and one-line summary, and for a straddle the cases readout."""
        interval = self._interval(context)
        floor = f"−{fmt.threshold(self.margin)}"
        more: MoreCases | None = None
        if outcome == "pass":
            reason = f"The whole of {what}, is at or above {floor} ({counts})."
            summary = (
                f"difference {fmt.signed(paired.difference)}, interval "
                f"{fmt.signed(interval.lower)}–{fmt.signed(interval.upper)}"
            )
        elif outcome == "fail":
            reason = f"The whole of {what}, is below {floor}: a regression ({counts})."
            summary = (
                f"difference {fmt.signed(paired.difference)}, interval "
                f"{fmt.signed(interval.lower)}–{fmt.signed(interval.upper)} below {floor}"
            )
        else:
            more = context.with_plan(self, self._more_cases(paired, context))
            reason = f"The {what[4:]}, straddles {floor} ({counts}); {readout(more)}."
            summary = (
                f"difference {fmt.signed(paired.difference)}, interval "
                f"{fmt.signed(interval.lower)}–{fmt.signed(interval.upper)} straddles "
                f"{floor}; {short_readout(more)}"
            )
        return reason, summary, more

    def _more_cases(self, paired: MetricComparison, context: DecisionContext) -> MoreCases:
        if not context.readouts:
            return MoreCases(None, "", "readout skipped at an intermediate look")
        more = repeats_needed(
            paired.interval_repeated,
            lambda projected: self._decide(projected) != "inconclusive",
            paired.n_pairs,
            estimate_on_threshold=paired.difference == -self.margin,
            limit=200_000,
        )
        low, high = paired.score_range
        distance = 0.0 if paired.difference is None else abs(paired.difference + self.margin)
        effect = distance if distance > 0 else context.effect * (high - low)
        cases = stats.betting_cases_for_power(paired.difference_sd(), effect, context.confidence)
        return more.with_power(cases, effect)

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "no_regression": {"margin": self.margin}}
