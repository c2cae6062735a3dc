"""Template helpers of the case table: a row's cell for a criterion, a score's reading."""

from __future__ import annotations

from typing import Any

from django import template

from runs.selectors.case_table import CaseRow, CriterionCell

register = template.Library()


@register.filter
def cell_for(row: CaseRow, criterion: str) -> CriterionCell:
    """The row's verdict on `criterion` (a pending cell when none was recorded yet)."""
    return row.cell(criterion)


@register.filter
def rating_text(annotation: Any) -> str:
    """What an annotation rates, in a few words: `fail`, `score 0.25`, `pass · 0.9`."""
    parts = [annotation.rating] if annotation.rating else []
    if annotation.score is not None:
        parts.append(f"score {annotation.score:g}")
    return " · ".join(parts) or "comment"
