"""One case's evidence on one metric across two runs' repeats, and the case's status."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

_CASE_ORDER = (
    "regressed",
    "improved",
    "flaky",
    "changed",
    "missing",
    "stable_fail",
    "stable_pass",
    "unchanged",
)
"""A case's status over several metrics: the first of these that one of them has
("mixed" when some metric regressed and another improved)."""


@dataclass(frozen=True, slots=True)
class RepeatEvidence:
    """One metric of one case: what each side's repeats gave, the test, and the status.

    Pass/fail: `baseline_passes` of `baseline_repeats` (repeats with a verdict) against
    `candidate_passes` of `candidate_repeats`; scores: the means of the repeats' values.
    `p_value` is the case's own exact test; `adjusted_p_value` the Tarone–Holm adjusted
    one, None when the case's margins could not reach the level whatever its outcome
    (every repeat passed, or failed, on both sides; too few repeats).
    """

    metric: str
    status: str
    pass_fail: bool
    baseline_repeats: int
    candidate_repeats: int
    baseline_passes: int | None
    candidate_passes: int | None
    baseline_mean: float | None
    candidate_mean: float | None
    p_value: float | None
    adjusted_p_value: float | None

    @classmethod
    def of(
        cls,
        *,
        metric: str,
        baseline: np.ndarray[Any, Any],
        candidate: np.ndarray[Any, Any],
        p_value: float | None,
        adjusted_p_value: float | None,
        alpha: float,
    ) -> RepeatEvidence:
        """A score metric's evidence from both sides' repeat values."""
        return cls(
            metric=metric,
            status=_score_status(baseline, candidate, adjusted_p_value, alpha),
            pass_fail=False,
            baseline_repeats=int(baseline.size),
            candidate_repeats=int(candidate.size),
            baseline_passes=None,
            candidate_passes=None,
            baseline_mean=_mean(baseline),
            candidate_mean=_mean(candidate),
            p_value=p_value,
            adjusted_p_value=adjusted_p_value,
        )

    @classmethod
    def counted(
        cls,
        *,
        metric: str,
        baseline: tuple[int, int],
        candidate: tuple[int, int],
        p_value: float | None,
        adjusted_p_value: float | None,
        alpha: float,
    ) -> RepeatEvidence:
        """A pass/fail metric's evidence from (passes, repeats with a verdict) per side."""
        (a, n), (b, m) = baseline, candidate
        return cls(
            metric=metric,
            status=_pass_fail_status(baseline, candidate, adjusted_p_value, alpha),
            pass_fail=True,
            baseline_repeats=n,
            candidate_repeats=m,
            baseline_passes=a,
            candidate_passes=b,
            baseline_mean=a / n if n else None,
            candidate_mean=b / m if m else None,
            p_value=p_value,
            adjusted_p_value=adjusted_p_value,
        )

    @property
    def text(self) -> str:
        """The evidence in a few characters: "2/5 → 5/5", or the score means over repeats."""
        if self.pass_fail:
            before = _ratio(self.baseline_passes, self.baseline_repeats)
            after = _ratio(self.candidate_passes, self.candidate_repeats)
            return f"{before} → {after}"
        before = _mean_text(self.baseline_mean, self.baseline_repeats)
        after = _mean_text(self.candidate_mean, self.candidate_repeats)
        return f"{before} → {after}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "evidence": self.text,
            "baseline": {
                "repeats": self.baseline_repeats,
                "passes": self.baseline_passes,
                "mean": self.baseline_mean,
            },
            "candidate": {
                "repeats": self.candidate_repeats,
                "passes": self.candidate_passes,
                "mean": self.candidate_mean,
            },
            "p_value": self.p_value,
            "adjusted_p_value": self.adjusted_p_value,
        }


@dataclass(frozen=True, slots=True)
class RepeatCase:
    """One case of two repeated runs: its status over the shown metrics and the evidence."""

    case_id: str
    status: str
    repeat_ids: tuple[str, ...]
    metrics: tuple[RepeatEvidence, ...]

    def has(self, status: str) -> bool:
        return any(item.status == status for item in self.metrics)

    @property
    def text(self) -> str:
        """e.g. "regressed (right 5/5 → 0/5, p 0.008, adjusted 0.016)"."""
        parts = [f"{item.metric} {item.text}{_p_text(item)}" for item in self.metrics]
        return f"{self.status} ({'; '.join(parts)})" if parts else self.status

    def to_dict(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id,
            "status": self.status,
            "repeat_ids": list(self.repeat_ids),
            "metrics": {item.metric: item.to_dict() for item in self.metrics},
        }


def case_status(evidence: Sequence[RepeatEvidence]) -> str:
    found = {item.status for item in evidence}
    if {"regressed", "improved"} <= found:
        return "mixed"
    return next((status for status in _CASE_ORDER if status in found), "unchanged")


def _beyond_noise(change: float, adjusted: float | None, alpha: float) -> str | None:
    if adjusted is None or adjusted > alpha or change == 0.0:
        return None
    return "regressed" if change < 0 else "improved"


def _pass_fail_status(
    baseline: tuple[int, int], candidate: tuple[int, int], adjusted: float | None, alpha: float
) -> str:
    (a, n), (b, m) = baseline, candidate
    if not (n and m):
        return "missing"
    found = _beyond_noise(b / m - a / n, adjusted, alpha)
    if found is not None:
        return found
    if 0 < a < n or 0 < b < m:
        return "flaky"
    if (a == n) != (b == m):
        return "changed"
    return "stable_pass" if a == n else "stable_fail"


def _score_status(
    before: np.ndarray[Any, Any], after: np.ndarray[Any, Any], adjusted: float | None, alpha: float
) -> str:
    if not (before.size and after.size):
        return "missing"
    found = _beyond_noise(float(after.mean() - before.mean()), adjusted, alpha)
    if found is not None:
        return found
    if np.ptp(before) > 0 or np.ptp(after) > 0:
        return "flaky"
    return "changed" if before[0] != after[0] else "unchanged"


def _mean(values: np.ndarray[Any, Any]) -> float | None:
    return math.fsum(values.tolist()) / values.size if values.size else None


def _ratio(passes: int | None, repeats: int) -> str:
    return "—" if not repeats else f"{passes}/{repeats}"


def _mean_text(mean: float | None, repeats: int) -> str:
    return "—" if mean is None else f"{mean:.3g} (mean of {repeats})"


def _p_text(item: RepeatEvidence) -> str:
    if item.p_value is None:
        return ""
    adjusted = "" if item.adjusted_p_value is None else f", adjusted {item.adjusted_p_value:.3g}"
    return f", p {item.p_value:.3g}{adjusted}"
