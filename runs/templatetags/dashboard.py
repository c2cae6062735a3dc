"""Formatting filters for the dashboard: numbers, intervals, JSON values, status badges.

Every filter returns plain text, so Django's autoescaping still applies to it, except
`isolated` (user text escaped, then wrapped in `<bdi>`) and `nonced` (our own chart
fragments given the response's CSP nonce): nothing here marks user data safe unescaped.
"""

from __future__ import annotations

import json
import math
from typing import Any

from django import template
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeString, mark_safe

from runs.views.bidi import bidi_controls_shown

register = template.Library()


@register.filter
def p_value(value: Any) -> str:
    """A p-value to three places, never rounded down to a misleading 0.000."""
    if isinstance(value, float) and 0.0 <= value < 0.001:
        return "<0.001"
    return number(value)


@register.filter
def number(value: Any, digits: int = 3) -> str:
    """A float rounded for reading; an em dash for nothing (None or NaN)."""
    if value is None or isinstance(value, bool):
        return "—" if value is None else str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "—"
        return f"{value:.{int(digits)}f}"
    return str(value)


@register.filter
def signed(value: Any, digits: int = 3) -> str:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "—"
    return f"{value:+.{int(digits)}f}"


@register.filter
def interval(item: Any, digits: int = 3) -> str:
    """`[lower, upper]` of anything with `lower` and `upper` (an estimate or an Interval)."""
    lower = getattr(item, "lower", None)
    upper = getattr(item, "upper", None)
    if lower is None and hasattr(item, "interval"):
        lower, upper = item.interval.lower, item.interval.upper
    if lower is None or upper is None:
        return "—"
    return f"[{number(float(lower), digits)}, {number(float(upper), digits)}]"


@register.filter
def pretty_json(value: Any) -> str:
    """A JSON value laid out for reading (strings shown as they are)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)


@register.filter
def figure_value(value: Any) -> str:
    """One figure behind a gate rule: numbers rounded, intervals as [lo, hi]."""
    if isinstance(value, dict) and set(value) >= {"lower", "upper"}:
        return f"[{number(value['lower'])}, {number(value['upper'])}]"
    if isinstance(value, float):
        return number(value, 4)
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False, default=str)
    return "—" if value is None else str(value)


@register.filter
def progress_percent(run: Any) -> int:
    total = getattr(run, "cases_total", 0) or 0
    done = getattr(run, "cases_done", 0) or 0
    return 0 if total <= 0 else min(100, round(100 * done / total))


@register.filter
def get_item(mapping: Any, key: Any) -> Any:
    return mapping.get(key) if hasattr(mapping, "get") else None


@register.filter
def compact_json(value: Any) -> str:
    """A JSON value on one line, for tables."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)


@register.filter
def usd(value: Any) -> str:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "—"
    return "$0" if value == 0 else f"${value:.4g}"


@register.filter
def milliseconds(value: Any) -> str:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "—"
    return f"{value:.1f} ms" if value < 100 else f"{value:,.0f} ms"


@register.filter
def nonced(fragment: Any, nonce: Any) -> str:
    """A chart fragment (built by `metrics.charts`) whose inline scripts carry the CSP nonce.

    Only a fragment already marked safe by our own code is changed; anything else is
    escaped as usual.
    """
    if not isinstance(fragment, SafeString):
        return conditional_escape(fragment)
    # str(), not truthiness: django-csp's lazy nonce is falsy until it is first read.
    attribute = format_html(' nonce="{}"', "" if nonce is None else str(nonce))
    return mark_safe(fragment.replace("<script", "<script" + attribute))


@register.filter
def isolated(value: Any) -> str:
    """A user-given string (a name, an id) escaped and bidi-isolated in a `<bdi>`.

    Right-to-left and override characters inside it cannot reorder the text around it,
    and the invisible direction controls are shown as their code points.
    """
    text = "" if value is None else str(value)
    return format_html("<bdi>{}</bdi>", bidi_controls_shown(text))
