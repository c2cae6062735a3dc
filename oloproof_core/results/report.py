"""Readable renderings of a result: a terminal table and an HTML table for notebooks."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from oloproof_core.results.judge_repeats_report import judge_repeat_html, judge_repeat_lines
from oloproof_core.results.repeats_report import repeat_html, repeat_lines

if TYPE_CHECKING:
    from oloproof_core.cases.case import CaseResult
    from oloproof_core.cases.usage import RoleUsage
    from oloproof_core.labels import LabelledEstimate
    from oloproof_core.results.estimate import MetricEstimate


class ReportedRun(Protocol):
    """What the renderings read of a run. `Result` has it and renders itself through
    these, so the report never imports it."""

    metrics: list[MetricEstimate]
    provenance: dict[str, Any]
    gate: Any
    run_id: str | None
    extras: dict[str, Any]

    @property
    def cases(self) -> Sequence[CaseResult]: ...

    @property
    def n_cases(self) -> int: ...

    @property
    def failed_cases(self) -> list[CaseResult]: ...

    def error_summary(self) -> list[tuple[str, int, str]]: ...

    def usage(self) -> dict[str, RoleUsage]: ...

    def labelled(self, metric: str, confidence: float | None = None) -> LabelledEstimate | None: ...


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


def render_text(result: ReportedRun) -> str:
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
    lines.extend(_warning_lines(result))
    lines.extend(repeat_lines(provenance) + judge_repeat_lines(provenance))
    lines.extend(_judge_lines(result))
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
        for name, count in judge_failures.items():
            lines.append(f"! evaluator {name!r} failed on {count} cases (missing verdicts)")
            first = _first_judge_error(result, name)
            if first is not None:
                lines.append(f"    first (case {first[0]}): {first[1]}")
    lines.extend(_usage_lines(result))
    lines.extend(_measured_lines(result))
    if result.gate is not None:
        lines.append("")
        lines.append(str(result.gate))
    lines.extend(_where_recorded_lines(result))
    return "\n".join(lines)


def _where_recorded_lines(result: ReportedRun) -> list[str]:
    """The recorded run's dashboard page (`extras["run_url"]`), and how to open it where no
    dashboard has served the store yet (`extras["run_url_hint"]`)."""
    link = result.extras.get("run_url")
    if not link:
        return []
    hint = result.extras.get("run_url_hint")
    return ["", f"recorded run #{result.run_id} → {link}", *([f"  {hint}"] if hint else [])]


def _judge_lines(result: ReportedRun) -> list[str]:
    """Per model-judged metric: the figure with people's labels, or what it assumes without."""
    from oloproof_core.labels import model_judged_criteria

    judged = model_judged_criteria(result.provenance)
    lines: list[str] = []
    for metric in result.metrics:
        name = metric.metric
        if name != metric.criterion:
            continue  # labels are per criterion
        labelled = result.labelled(name)
        if labelled is not None:
            lines.append(
                f"{name} with people's labels ({labelled.labels_text}): "
                f"{_number(labelled.estimate)} [{_number(labelled.interval.lower)}, "
                f"{_number(labelled.interval.upper)}]; people minus judge "
                f"[{labelled.judge_bias.lower:+.3f}, {labelled.judge_bias.upper:+.3f}]"
            )
        elif name in judged:
            lines.append(
                f"{name} is scored by a model: its interval assumes the judge is right "
                "until people label the review queue's draws"
            )
    return ["", *lines] if lines else []


def _warning_lines(result: ReportedRun) -> list[str]:
    """What the figures themselves warn of (few clusters, say), once each."""
    warnings = dict.fromkeys(
        f"{metric.metric}: {metric.warning}" for metric in result.metrics if metric.warning
    )
    return ["", *(f"! {warning}" for warning in warnings)] if warnings else []


def _usage_lines(result: ReportedRun) -> list[str]:
    """Model calls by role, as the platform measured them: tokens, cost, summed latency."""
    usage = result.usage()
    if not usage:
        return []
    lines = ["", "model calls (measured by oloproof):"]
    for role, figures in usage.items():
        cost = "cost not measurable" if figures.cost_usd is None else f"${figures.cost_usd:.6f}"
        lines.append(
            f"    {role}: {figures.calls} calls, {figures.input_tokens:,} tokens in, "
            f"{figures.output_tokens:,} out, {cost}, {figures.latency_ms / 1000:.2f} s in calls"
        )
    return lines


def _measured_lines(result: ReportedRun) -> list[str]:
    """Latency quantiles and costs with their intervals (`oloproof_core.results.measured`)."""
    from oloproof_core.results.measured_text import measured_lines

    return measured_lines(result)


def _measured_html(result: ReportedRun) -> str:
    from oloproof_core.results.measured_text import measured_html

    return measured_html(result)


def _first_judge_error(result: ReportedRun, criterion: str) -> tuple[str, str] | None:
    """The first case on which the evaluator of `criterion` raised, and its message."""
    for case in result.cases:
        verdict = case.verdicts.get(criterion)
        if case.error is None and verdict is not None and verdict.error:
            return case.id, verdict.error
    return None


def _release_and_dataset(result: ReportedRun) -> tuple[str, str]:
    system = result.provenance.get("system", {})
    dataset = result.provenance.get("dataset", {})
    release = system.get("name", "?") + (f"@{system['version']}" if system.get("version") else "")
    source = str(dataset.get("source", "?"))
    digest = str(dataset.get("digest", ""))[:12]
    return release, f"{source} (digest {digest})" if digest else source


def _missing_reasons(result: ReportedRun) -> list[str]:
    """Why cases are missing: the system's failures by type, then each evaluator's."""
    reasons = [
        f"system {kind} × {count} (first: {first})" for kind, count, first in result.error_summary()
    ]
    for name, tally in result.provenance.get("judging", {}).items():
        if tally.get("failed"):
            first = _first_judge_error(result, name)
            detail = f" — first ({first[0]}): {first[1]}" if first is not None else ""
            reasons.append(f"evaluator {name} failed on {tally['failed']} cases{detail}")
    return reasons


def _gate_html(gate: object) -> str:
    if gate is None:
        return "<p><b>gate</b>: none (no policy)</p>"
    escape = html.escape
    data = gate if isinstance(gate, Mapping) else getattr(gate, "to_dict", dict)()
    items = "".join(
        f"<li><b>{escape(str(rule.get('outcome')))}</b> {escape(str(rule.get('rule')))}: "
        f"{escape(str(rule.get('reason')))}</li>"
        for rule in data.get("rules") or []
    )
    outcome = escape(str(data.get("outcome", "?")).upper())
    return f"<p><b>gate {outcome}</b></p><ul>{items}</ul>"


def render_html(result: ReportedRun) -> str:
    """The notebook view: release, dataset, counts, metrics, missing reasons, gate, link."""
    escape = html.escape
    release, dataset = _release_and_dataset(result)
    missing = len(result.failed_cases)
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
    reasons = "".join(f"<li>{escape(reason)}</li>" for reason in _missing_reasons(result))
    link = result.extras.get("run_url")
    parts = [
        f"<p><b>{escape(release)}</b> on {escape(dataset)}: {result.n_cases} cases, "
        f"{missing} missing (system failed)</p>",
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>",
        repeat_html(result.provenance),
        judge_repeat_html(result.provenance),
        _measured_html(result),
        f"<p>missing because:</p><ul>{reasons}</ul>" if reasons else "",
        "".join(
            f"<p><b>!</b> {escape(metric.metric)}: {escape(metric.warning)}</p>"
            for metric in result.metrics
            if metric.warning
        ),
        _gate_html(result.gate if result.gate is not None else result.extras.get("gate")),
        f'<p><a href="{escape(str(link))}" target="_blank">run #{escape(str(result.run_id))} '
        "on the dashboard</a></p>"
        if link
        else "",
    ]
    return f'<div class="oloproof-result">{"".join(parts)}</div>'
