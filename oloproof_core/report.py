"""Readable renderings of a result: a terminal table and an HTML table for notebooks."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from oloproof_core.aggregate import MetricEstimate
    from oloproof_core.result import Result


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _row(metric: MetricEstimate) -> list[str]:
    interval = f"[{_number(metric.interval.lower)}, {_number(metric.interval.upper)}]"
    missing = str(metric.n_missing) + (" !" if metric.n_missing else "")
    return [
        metric.metric,
        _number(metric.estimate),
        interval,
        str(metric.n_observed),
        missing,
        metric.method,
    ]


def render_text(result: Result) -> str:
    provenance = result.provenance
    system = provenance.get("system", {})
    dataset = provenance.get("dataset", {})
    release = system.get("name", "?") + (f"@{system['version']}" if system.get("version") else "")
    level = round(100 * (result.metrics[0].confidence if result.metrics else 0.95))
    header = ["metric", "estimate", f"{level}% interval", "observed", "missing", "method"]
    rows = [header] + [_row(metric) for metric in result.metrics]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        f"{release} on {dataset.get('source', '?')} ({result.n_cases} cases, dataset "
        f"{str(dataset.get('digest', ''))[:12]})"
    ]
    for index, row in enumerate(rows):
        lines.append(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
        if index == 0:
            lines.append("  ".join("-" * width for width in widths))
    warnings = dict.fromkeys(
        f"{metric.metric}: {metric.warning}" for metric in result.metrics if metric.warning
    )
    if warnings:
        lines.append("")
        lines.extend(f"! {warning}" for warning in warnings)
    failures = result.error_summary()
    if failures:
        total = sum(count for _, count, _ in failures)
        lines.append("")
        lines.append(
            f"! {total} of {result.n_cases} cases are missing (the system failed); "
            "they bound the intervals instead of counting as wrong:"
        )
        lines.extend(f"    {kind} × {count} (first: {first})" for kind, count, first in failures)
    judge_failures = {
        name: tally["failed"]
        for name, tally in provenance.get("judging", {}).items()
        if tally.get("failed")
    }
    if judge_failures:
        lines.append("")
        lines.extend(
            f"! evaluator {name!r} failed on {count} cases (missing verdicts)"
            for name, count in judge_failures.items()
        )
    if result.gate is not None:
        lines.append("")
        lines.append(str(result.gate))
    return "\n".join(lines)


def render_html(result: Result) -> str:
    escape = html.escape
    head = "".join(
        f"<th>{escape(cell)}</th>"
        for cell in ["metric", "estimate", "interval", "observed", "missing", "method"]
    )
    body = []
    for metric in result.metrics:
        cells = _row(metric)
        style = ' style="color:#b00;font-weight:bold"' if metric.n_missing else ""
        body.append(
            "<tr>"
            + "".join(
                f"<td{style if i == 4 else ''}>{escape(cell)}</td>" for i, cell in enumerate(cells)
            )
            + "</tr>"
        )
    gate = f"<p>{escape(str(result.gate))}</p>" if result.gate is not None else ""
    gate = (
        "".join(
            f"<p><b>!</b> {escape(metric.metric)}: {escape(metric.warning)}</p>"
            for metric in result.metrics
            if metric.warning
        )
        + gate
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{gate}"
