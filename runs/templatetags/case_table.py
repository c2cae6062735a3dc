"""Template helpers of the case table: a row's cell for a criterion, a score's reading."""

from __future__ import annotations

from typing import Any

from django import template

import oloproof_core as engine
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


@register.filter
def repeat_index(case_id: str) -> int:
    """Which repeat of its case a repeated run's case is (`q17#r2`: 2; 0 for none)."""
    return engine.repeat_of(case_id)


@register.filter
def case_of_repeat(case_id: str) -> str:
    """The case a repeat belongs to (`q17#r2`: `q17`)."""
    return engine.case_id_of(case_id)
