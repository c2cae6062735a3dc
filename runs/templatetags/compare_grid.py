"""Filters for the comparison grid: an output diff and a metric's values on one case."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.safestring import SafeString

from runs.views.text_diff import inline_diff, output_text

register = template.Library()


@register.filter
def output_diff(case: Any) -> SafeString:
    """The candidate's output of a compared case, diffed against the baseline's."""
    content = case.content
    return inline_diff(output_text(content.baseline_output), output_text(content.candidate_output))


@register.filter
def as_text(value: Any) -> str:
    return output_text(value)


@register.filter
def alpha(confidence: Any) -> str:
    """The significance level a confidence implies (0.95 → 0.05)."""
    if not isinstance(confidence, int | float):
        return "—"
    return f"{1.0 - confidence:.3g}"


@register.filter
def pairs_over(item: Any) -> str:
    """What a compared metric's figures are over: pairs, complete pairs, clusters."""
    from oloproof_core.results.compare import counts_text

    return counts_text(item)
