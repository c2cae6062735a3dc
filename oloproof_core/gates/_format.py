"""Number formatting shared by the rules' labels, summaries and reasons."""

from __future__ import annotations


def number(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def threshold(value: float) -> str:
    """A threshold as the user wrote it (0.9, not 0.900)."""
    return f"{value:g}"


def percent(rate: float) -> str:
    return f"{100 * rate:.3g}%"


def span(lower: float, upper: float) -> str:
    return f"{number(lower)}–{number(upper)}"


def signed(value: float | None) -> str:
    return "—" if value is None else f"{value:+.3f}"
