"""What a rule says of the interval it read when people have labelled the metric."""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof_core.gates._context import DecisionContext
from oloproof_core.gates._outcome import MoreCases

if TYPE_CHECKING:
    from oloproof_core.labels import LabelledEstimate

__all__ = ["interval_source", "more_labels"]


def interval_source(context: DecisionContext, name: str) -> str:
    """Which interval a rule read: with people's labels, or the verdicts alone."""
    labelled = context.labelled(name)
    if labelled is not None:
        return f"judge verdicts and {labelled.n_labels} people's labels (prediction-powered)"
    if context.judged_by_model(name):
        return "judge verdicts only: the figure assumes the judge is right"
    return "verdicts"


def more_labels(labelled: LabelledEstimate, threshold: float) -> MoreCases:
    """How many more labels would settle a rule the labelled interval straddles."""
    needed = labelled.labels_needed(2.0 * abs(labelled.estimate - threshold))
    if needed is None:
        return MoreCases(None, "", "more labels alone cannot settle it at this estimate")
    return MoreCases(None, "", f"about {max(1, needed):,} more labels of the queue would settle it")
