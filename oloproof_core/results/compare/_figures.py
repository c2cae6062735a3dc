"""A comparison's figures: each metric's paired difference, its counts in words, and the
two runs' comparison as data. `Comparison` adds what reads them (its cases, export, text).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from oloproof_core.results.compare._paired import FloatArray, paired_figures
from oloproof_core.stats import Interval

if TYPE_CHECKING:
    from oloproof_core.labels import LabelledEstimate


@dataclass(frozen=True, slots=True)
class CaseMeans:
    """Each case's mean over its repeats on both sides (NaN: missing), the units a
    comparison of runs with different repeat counts pairs (`_case_means.py`)."""

    baseline: FloatArray
    candidate: FloatArray
    ids: tuple[str, ...]
    clusters: tuple[str, ...] | None


@dataclass(frozen=True, slots=True)
class MetricComparison:
    """One metric of two runs compared on the union of their cases.

    The three estimates (baseline, candidate, difference) are over the same
    `n_complete` pairs observed on both sides, so `difference` is exactly
    candidate − baseline; `interval` and `p_value` are over all `n_pairs` cases
    of the union, every pair with a missing side bounded (`n_missing_pairs`),
    and come from one procedure, so p ≤ 1 − confidence exactly when the interval
    excludes 0. `q_value` is the Benjamini–Hochberg adjusted p-value across the
    comparison's metrics and `flag` ("regressed", "improved" or None) the
    false-discovery-controlled verdict. `regressed` and `improved` list case ids
    whose value went down or up. `warning` says what a reader must know (too few
    clusters).
    """

    metric: str
    criterion: str
    value_type: str
    score_range: tuple[float, float]
    baseline_estimate: float | None
    candidate_estimate: float | None
    difference: float | None
    interval: Interval
    p_value: float | None
    method: str
    confidence: float
    n_pairs: int
    n_missing_pairs: int
    regressed: tuple[str, ...]
    improved: tuple[str, ...]
    n_clusters: int | None
    n_complete: int
    q_value: float | None
    flag: str | None
    warning: str | None
    _baseline: FloatArray = field(repr=False, compare=False)
    _candidate: FloatArray = field(repr=False, compare=False)
    _clusters: tuple[str, ...] | None = field(repr=False, compare=False)
    _ids: tuple[str, ...] = field(default=(), repr=False, compare=False)
    _units: CaseMeans | None = field(default=None, repr=False, compare=False)
    """The pairs the figures are over when they are not the rows above (`_baseline`,
    `_candidate`, `_ids`, which the case grid reads): each case's means over its repeats."""

    @property
    def cluster_aware(self) -> bool:
        return self.n_clusters is not None

    @property
    def paired_units(self) -> CaseMeans:
        """The pairs the figures are over: the rows, or each case's means over its repeats."""
        if self._units is not None:
            return self._units
        return CaseMeans(self._baseline, self._candidate, self._ids, self._clusters)

    @property
    def estimates_over(self) -> str:
        if self._units is not None:
            return (
                f"{self.n_complete} complete pairs of case means (each side's mean over its "
                "own repeats, observed in both runs)"
            )
        return f"{self.n_complete} complete pairs (observed in both runs)"

    @property
    def interval_over(self) -> str:
        bounded = (
            f", {self.n_missing_pairs} with a missing side bounded" if self.n_missing_pairs else ""
        )
        return f"all {self.n_pairs} cases{bounded}"

    def interval_repeated(self, copies: int) -> Interval:
        """The interval if the whole comparison were `copies` times as large (readout).

        Every pair is repeated `copies` times as new cases (and each cluster as new
        clusters), so the shares of regressed and improved pairs, the spread of
        the differences and the share of incomplete pairs all stay those seen.
        """
        if copies <= 1:
            return self.interval
        units = self.paired_units
        ids = [f"{case_id}#{r}" for r in range(copies) for case_id in units.ids]
        clusters = None
        if units.clusters is not None:
            clusters = [f"{label}#{r}" for r in range(copies) for label in units.clusters]
        low, high = self.score_range
        return paired_figures(
            np.tile(units.baseline, copies),
            np.tile(units.candidate, copies),
            pass_fail=self.value_type == "pass_fail" and self._units is None,
            low=low,
            high=high,
            confidence=self.confidence,
            clusters=clusters,
            keys=ids,
        ).interval

    def unit_fills(self) -> tuple[FloatArray, FloatArray, list[str]]:
        """Per-case differences on [0, 1] with missing sides at worst / best, and the ids."""
        span = self.score_range[1] - self.score_range[0]
        units = self.paired_units
        missing_a, missing_b = np.isnan(units.baseline), np.isnan(units.candidate)
        low, high = self.score_range
        fills = []
        for best in (False, True):
            a = np.where(missing_a, low if best else high, units.baseline)
            b = np.where(missing_b, high if best else low, units.candidate)
            fills.append(np.clip((b - a + span) / (2.0 * span), 0.0, 1.0))
        return fills[0], fills[1], list(units.ids)

    def cluster_labels(self) -> list[str]:
        """Each pair's cluster, in the order of `unit_fills`' ids (the ids where none)."""
        units = self.paired_units
        return list(units.ids if units.clusters is None else units.clusters)

    def pair_counts(self) -> PairCounts:
        """Complete, tied and missing pairs counted, with `sentences()` that say them."""
        return PairCounts.of(self)

    def difference_sd(self) -> float:
        """Standard deviation of the complete pairs' differences (planning)."""
        units = self.paired_units
        both = ~(np.isnan(units.baseline) | np.isnan(units.candidate))
        differences = units.candidate[both] - units.baseline[both]
        return float(differences.std(ddof=1)) if differences.size > 1 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "criterion": self.criterion,
            "value_type": self.value_type,
            "score_range": list(self.score_range),
            "baseline_estimate": self.baseline_estimate,
            "candidate_estimate": self.candidate_estimate,
            "difference": self.difference,
            "interval": {"lower": self.interval.lower, "upper": self.interval.upper},
            "confidence": self.confidence,
            "p_value": self.p_value,
            "method": self.method,
            "n_pairs": self.n_pairs,
            "n_missing_pairs": self.n_missing_pairs,
            "n_clusters": self.n_clusters,
            "n_complete": self.n_complete,
            "estimates_over": self.estimates_over,
            "interval_over": self.interval_over,
            "q_value": self.q_value,
            "flag": self.flag,
            "warning": self.warning,
            "explanation": self.pair_counts().sentences(),
            "regressed": list(self.regressed),
            "improved": list(self.improved),
        }


@dataclass(frozen=True, slots=True)
class ComparisonFigures:
    """Two runs compared metric by metric, paired by case id: the figures alone, which
    every reader of a comparison (its cases, its export, its text) takes."""

    baseline: str
    candidate: str
    confidence: float
    metrics: tuple[MetricComparison, ...]
    n_cases: int
    n_common: int
    only_in_baseline: tuple[str, ...]
    only_in_candidate: tuple[str, ...]
    metrics_only_in_baseline: tuple[str, ...] = ()
    metrics_only_in_candidate: tuple[str, ...] = ()
    n_clusters: int | None = None
    fdr: bool = True
    labelled: dict[str, LabelledEstimate] = field(default_factory=dict)
    """Candidate minus baseline from both runs' verdicts and people's labels, per metric
    both runs have labels of on one queue's draws (`oloproof_core.labels`)."""
    repeats: tuple[int, int] = (1, 1)
    """How many times the baseline and the candidate ran each case (`Comparison.repeat_cases`
    puts a case's repeats back together)."""
    auto: tuple[bool, bool] = (False, False)
    """Whether the baseline, and the candidate, ran with `repeats: auto` (their `repeats`
    then the most a case ran)."""
    repeats_only_in: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    """The repeats (`q7#r4`) only the baseline, and only the candidate, ran: with different
    repeat counts the figures pair case means, and these rows have no partner."""

    @property
    def cluster_aware(self) -> bool:
        return self.n_clusters is not None

    @property
    def paired_case_means(self) -> bool:
        """Whether the pairs are case means: the runs repeated cases different numbers of
        times, or one ran with `repeats: auto`."""
        return self.repeats[0] != self.repeats[1] or any(self.auto)

    @property
    def case_means_note(self) -> str:
        """What the pairs are when the runs repeated each case a different number of
        times ("" when they did not)."""
        before, after = (
            f"up to {count} (repeats: auto)" if auto else str(count)
            for count, auto in zip(self.repeats, self.auto, strict=True)
        )
        if not self.paired_case_means:
            return ""
        return (
            f"The runs repeated each case {before} and {after} times: each pair is a case's "
            "mean over the baseline's repeats against its mean over the candidate's (a case "
            "with a repeat left without a value is missing on that side)."
        )

    def has_metric(self, name: str) -> bool:
        return any(item.metric == name for item in self.metrics)

    def metric(self, name: str) -> MetricComparison:
        for item in self.metrics:
            if item.metric == name:
                return item
        known = ", ".join(item.metric for item in self.metrics) or "none"
        raise KeyError(f"no metric {name!r} in both runs; compared metrics: {known}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "candidate": self.candidate,
            "confidence": self.confidence,
            "n_cases": self.n_cases,
            "n_common": self.n_common,
            "only_in_baseline": list(self.only_in_baseline),
            "only_in_candidate": list(self.only_in_candidate),
            "metrics_only_in_baseline": list(self.metrics_only_in_baseline),
            "metrics_only_in_candidate": list(self.metrics_only_in_candidate),
            "cluster_aware": self.cluster_aware,
            "n_clusters": self.n_clusters,
            "fdr": "benjamini-hochberg" if self.fdr else None,
            "metrics": [item.to_dict() for item in self.metrics],
            "labelled": {name: figure.to_dict() for name, figure in self.labelled.items()},
            "repeats": {
                side: "auto" if auto else count
                for side, count, auto in zip(
                    ("baseline", "candidate"), self.repeats, self.auto, strict=True
                )
            },
            "paired": "case means" if self.paired_case_means else "cases",
            "repeats_only_in_baseline": len(self.repeats_only_in[0]),
            "repeats_only_in_candidate": len(self.repeats_only_in[1]),
        }


@dataclass(frozen=True, slots=True)
class PairCounts:
    """What one metric's difference, interval and p-value are over, counted."""

    n_pairs: int
    n_complete: int
    n_regressed: int
    n_improved: int
    n_ties: int
    missing_from_baseline: int
    missing_from_candidate: int
    missing_from_both: int
    net_change: float
    """|Σ changes| over the complete pairs, in whole score ranges (cases for pass/fail)."""

    @classmethod
    def of(cls, item: MetricComparison) -> PairCounts:
        units = item.paired_units
        gone_base, gone_cand = np.isnan(units.baseline), np.isnan(units.candidate)
        complete = int(np.count_nonzero(~(gone_base | gone_cand)))
        regressed, improved = len(item.regressed), len(item.improved)
        low, high = item.score_range
        net = abs(item.difference or 0.0) * complete / ((high - low) or 1.0)
        return cls(
            n_pairs=item.n_pairs,
            n_complete=complete,
            n_regressed=regressed,
            n_improved=improved,
            n_ties=complete - regressed - improved,
            missing_from_baseline=int(np.count_nonzero(gone_base & ~gone_cand)),
            missing_from_candidate=int(np.count_nonzero(gone_cand & ~gone_base)),
            missing_from_both=int(np.count_nonzero(gone_base & gone_cand)),
            net_change=round(net, 6),
        )

    def sentences(self) -> list[str]:
        """The counts in words: what the difference is over, and what the test is over."""
        words = [
            f"The difference is over the {_cases(self.n_complete)} with a value in both runs: "
            f"{self.n_regressed} regressed, {self.n_improved} improved and "
            f"{self.n_ties} unchanged (ties, which carry no evidence either way)."
        ]
        gaps = [
            (self.missing_from_candidate, "missing from the candidate"),
            (self.missing_from_baseline, "missing from the baseline"),
            (self.missing_from_both, "missing from both"),
        ]
        named = [f"{count} {where}" for count, where in gaps if count]
        if named:
            words.append(
                f"The interval and p-value are over all {_cases(self.n_pairs)}: "
                f"{_joined(named)} {'is' if self.n_missing_pairs == 1 else 'are'} not counted "
                "in the difference but bounded at their "
                "worst and best outcome, which widens the interval and raises p."
            )
            if self.n_regressed + self.n_improved and self.n_missing_pairs >= self.net_change:
                words.append(
                    f"The {self.n_missing_pairs} pairs with a missing side could outweigh the "
                    f"net change ({_net(self.net_change)}), so they, not the changed cases, "
                    "keep p high; recording the missing cases would decide it."
                )
        else:
            words.append(f"The interval and p-value are over the same {_cases(self.n_pairs)}.")
        if not self.n_regressed + self.n_improved:
            words.append(
                "No case with a value in both runs changed, so nothing here is evidence of a "
                "difference (and a high p is no proof that there is none)."
            )
        return words

    @property
    def n_missing_pairs(self) -> int:
        return self.missing_from_baseline + self.missing_from_candidate + self.missing_from_both


def _cases(count: int) -> str:
    return f"{count} case" if count == 1 else f"{count} cases"


def _net(units: float) -> str:
    if float(units).is_integer():
        return f"{int(units)} case{'' if units == 1 else 's'}"
    return f"worth {units:.3g} cases at the full range"


def _joined(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
