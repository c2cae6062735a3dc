"""A run's latency and cost figures as the terminal report and the result file show them.

Without a policy nothing states what a case can cost at most, so the mean cost's
interval has no upper end (`oloproof_core.stats._nonnegative_mean`); a policy's cost
rule states one (`cap_usd`), and the report then reads the figures under it too.
"""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING, Any

from oloproof_core.results.measured import (
    COSTS,
    FIGURES,
    CaseFigures,
    MeasuredFigure,
    NotMeasuredError,
    case_figures,
    measured_figure,
    with_success,
)

if TYPE_CHECKING:
    from oloproof_core.results.measured import MeasuredRun

UNITS = {"latency_p50_ms": "ms", "latency_p95_ms": "ms"}


def _cost_rules(result: MeasuredRun) -> list[dict[str, Any]]:
    """The cost rules of the policy the run was gated on, as its provenance records them."""
    policy = result.provenance.get("policy")
    rules = (policy.get("rules") or []) if isinstance(policy, dict) else []
    return [rule for rule in rules if isinstance(rule, dict) and rule.get("metric") in COSTS]


def stated_cap(result: MeasuredRun) -> float | None:
    """The cap per case the run's policy states on its cost rules (the lowest, if several)."""
    caps = [float(rule["cap_usd"]) for rule in _cost_rules(result) if rule.get("cap_usd")]
    return min(caps) if caps else None


def measured_figures(result: MeasuredRun, confidence: float) -> list[MeasuredFigure]:
    """Every figure the run gives; none when its cases carry no measurements."""
    try:
        figures = case_figures(result, with_success=False)
    except NotMeasuredError:
        return []
    cap = stated_cap(result)
    # A run whose system made no priced model call has nothing to say of cost (each case
    # $0) unless its policy asks; else the figures would be noise, and NumPy, which they
    # need, stays unloaded. Nor then are its verdicts read for which cases succeeded.
    priced = any(cost > 0 for cost in figures.cost) or bool(_cost_rules(result))
    if priced:
        figures = with_success(result, figures)
    found = []
    for name in FIGURES:
        if name in COSTS and not priced:
            continue
        if name == "cost_per_success_usd" and figures.success is None:
            continue
        found.append(_figure(figures, name, confidence, cap))
    return found


def _figure(
    figures: CaseFigures, name: str, confidence: float, cap: float | None
) -> MeasuredFigure:
    if name not in COSTS:
        return measured_figure(figures, name, confidence)
    from oloproof_core.stats._cap import CapExceededError

    try:
        return measured_figure(figures, name, confidence, cap=cap)
    except CapExceededError:  # the gate names the case; here, the figure stays open
        return measured_figure(figures, name, confidence)


def measured_dicts(result: MeasuredRun) -> list[dict[str, Any]]:
    """The figures as the result file holds them (`"measured"`)."""
    return [figure.to_dict() for figure in measured_figures(result, _level(result))]


def _concluded_figures(result: MeasuredRun, level: float) -> list[MeasuredFigure]:
    """The figures the run's conclusion kept in its provenance (as its result file and
    recorded run hold them), read back rather than worked out again from every case."""
    kept = result.provenance.get("measured")
    if (
        isinstance(kept, list)
        and kept
        and all(isinstance(item, dict) and item.get("confidence") == level for item in kept)
    ):
        return [MeasuredFigure.from_dict(item) for item in kept]
    return measured_figures(result, level)


def _level(result: MeasuredRun) -> float:
    level = result.provenance.get("confidence")
    if isinstance(level, (int, float)) and 0 < level < 1:
        return float(level)
    return result.metrics[0].confidence if result.metrics else 0.95


def _number(value: float | None, name: str) -> str:
    if value is None:
        return "—"
    if value == math.inf:
        return "∞"
    return f"{value:,.1f}" if name in UNITS else f"${value:.6f}"


def measured_lines(result: MeasuredRun) -> list[str]:
    """The terminal report's block: each figure, its interval and what it is over."""
    level = _level(result)
    figures = _concluded_figures(result, level)
    if not figures:
        return []
    lines = ["", f"latency and cost (measured by oloproof, {100 * level:.3g}% intervals):"]
    for figure in figures:
        name = figure.name
        low, high = _number(figure.interval.lower, name), _number(figure.interval.upper, name)
        missing = f", {figure.n_missing} missing" if figure.n_missing else ""
        lines.append(
            f"    {name}: {_number(figure.estimate, name)} [{low}, {high}] "
            f"over {figure.n_observed} cases{missing}"
        )
    if any(f.interval.upper == math.inf and f.name in COSTS for f in figures):
        lines.append(
            "    costs have no top of their own: an upper end needs the most a case can "
            "cost (cap_usd in a policy's cost rule)"
        )
    return lines


def measured_html(result: MeasuredRun) -> str:
    """The notebook view's block: the same figures as the terminal's, one row each."""
    level = _level(result)
    rows = "".join(
        f"<tr><td>{html.escape(f.name)}</td><td>{html.escape(_number(f.estimate, f.name))}</td>"
        f"<td>[{html.escape(_number(f.interval.lower, f.name))}, "
        f"{html.escape(_number(f.interval.upper, f.name))}]</td><td>{f.n_observed}</td>"
        f"<td>{f.n_missing}</td></tr>"
        for f in _concluded_figures(result, level)
    )
    if not rows:
        return ""
    head = "".join(
        f"<th>{cell}</th>"
        for cell in ("measured", "estimate", f"{100 * level:.3g}% interval", "observed", "missing")
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
