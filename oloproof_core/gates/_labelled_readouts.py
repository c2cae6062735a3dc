"""What a rule says of the interval it read when people have labelled the metric."""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof_core.gates._outcome import MoreCases

if TYPE_CHECKING:
    from oloproof_core.gates._context import DecisionContext
    from oloproof_core.labels import LabelledEstimate

__all__ = ["interval_source", "labelled_which", "more_labels"]


def interval_source(context: DecisionContext, name: str) -> str:
    """Which interval a rule read: with people's labels, or the verdicts alone."""
    labelled = context.labelled(name)
    if labelled is not None and labelled.known:
        return f"people's labels of every case ({labelled.labels_text})"
    if labelled is not None:
        return f"judge verdicts and {labelled.n_labels} people's labels (prediction-powered)"
    if context.judged_by_model(name):
        return "judge verdicts only: the figure assumes the judge is right"
    return "verdicts"


def labelled_which(labelled: LabelledEstimate | None, verdicts: str = "judge verdicts") -> str:
    """The words after "interval" in a rule's reason: what labels went into it."""
    if labelled is None:
        return ""
    if labelled.known:
        return " (people's labels of every case: known, not estimated)"
    return f" ({verdicts} + {labelled.n_labels} labels)"


def more_labels(labelled: LabelledEstimate, threshold: float) -> MoreCases:
    """How many more labels would settle a rule the labelled interval straddles; never
    more than the cases left to label."""
    if labelled.known:
        return MoreCases(
            None,
            "",
            f"people labelled every case; the {labelled.n_missing:,} missing cases keep "
            "it open, and no label can settle it",
        )
    needed = labelled.labels_needed(2.0 * abs(labelled.estimate - threshold))
    if needed is None:
        return MoreCases(None, "", "more labels alone cannot settle it at this estimate")
    left = labelled.cases_left
    return MoreCases(
        None,
        "",
        f"about {max(1, needed):,} more labels of the queue would settle it "
        f"({left:,} case{'s' if left != 1 else ''} left to label)",
    )
