"""A readable table of a comparison for the terminal."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from oloproof_core.results.compare._figures import ComparisonFigures, MetricComparison


def counts_text(item: MetricComparison) -> str:
    """What one pair's figure is over, counted: pairs, complete pairs, clusters."""
    words = f"{item.n_complete} of {item.n_pairs} pairs complete"
    if item.n_clusters is not None:
        words += f", {item.n_clusters} clusters"
    return words


def _number(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "—"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _p(value: float | None) -> str:
    if value is None:
        return "—"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _row(item: MetricComparison) -> list[str]:
    interval = f"[{_number(item.interval.lower, True)}, {_number(item.interval.upper, True)}]"
    missing = str(item.n_missing_pairs) + (" !" if item.n_missing_pairs else "")
    return [
        item.metric,
        _number(item.baseline_estimate),
        _number(item.candidate_estimate),
        _number(item.difference, True),
        interval,
        _p(item.p_value),
        _p(item.q_value),
        item.flag or "",
        str(len(item.regressed)),
        str(len(item.improved)),
        missing,
    ]


def render_comparison(comparison: ComparisonFigures) -> str:
    level = f"{100 * comparison.confidence:.3g}%"
    header = [
        "metric",
        "baseline",
        "candidate",
        "difference",
        f"{level} interval",
        "p",
        "q (BH)" if comparison.fdr else "q (none)",
        "flag",
        "regressed",
        "improved",
        "missing pairs",
    ]
    rows = [header] + [_row(item) for item in comparison.metrics]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        f"{comparison.candidate} vs {comparison.baseline}: {comparison.n_cases} cases "
        f"({comparison.n_common} in both runs), paired by case id"
    ]
    for index, row in enumerate(rows):
        lines.append(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
        if index == 0:
            lines.append("  ".join("-" * width for width in widths))
    lines.extend(_notes(comparison))
    for name, figure in comparison.labelled.items():
        lines.append(
            f"{name} with people's labels ({figure.labels_text}): difference "
            f"{figure.estimate:+.3f}, interval [{figure.interval.lower:+.3f}, "
            f"{figure.interval.upper:+.3f}]"
        )
    return "\n".join(lines)


def _notes(comparison: ComparisonFigures) -> list[str]:
    """What the table alone does not say: methods, clusters, unpaired cases and metrics."""
    lines: list[str] = []
    if comparison.metrics:
        lines.append("")
        for method in dict.fromkeys(item.method for item in comparison.metrics):
            lines.append(f"method: {method}")
        first = comparison.metrics[0]
        lines.append(
            f"estimates and difference over {first.estimates_over}; interval and p over "
            f"{first.interval_over}, from one procedure (they never disagree)."
        )
        if comparison.fdr:
            lines.append(
                "flag: Benjamini–Hochberg q ≤ "
                f"{1 - comparison.confidence:.3g} across the {len(comparison.metrics)} "
                "metrics (false-discovery control)."
            )
    if comparison.cluster_aware:
        lines.append(f"cluster-aware: {comparison.n_clusters} clusters.")
    if comparison.case_means_note:
        lines.append(comparison.case_means_note)
    for warning in dict.fromkeys(item.warning for item in comparison.metrics if item.warning):
        lines.append(f"! {warning}")
    for side, ids in (
        ("baseline", comparison.only_in_baseline),
        ("candidate", comparison.only_in_candidate),
    ):
        if ids:
            shown = ", ".join(ids[:5]) + (", …" if len(ids) > 5 else "")
            lines.append(
                f"! {len(ids)} cases only in the {side} run ({shown}); each is a "
                "pair with a missing side."
            )
    for side, names in (
        ("baseline", comparison.metrics_only_in_baseline),
        ("candidate", comparison.metrics_only_in_candidate),
    ):
        if names:
            lines.append(f"metrics only in the {side} run (not compared): {', '.join(names)}")
    for item in comparison.metrics:
        if item.regressed:
            shown = ", ".join(item.regressed[:5]) + (", …" if len(item.regressed) > 5 else "")
            lines.append(f"{item.metric}: regressed on {shown}")
    return lines


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for index, row in enumerate(rows):
        lines.append(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
        if index == 0:
            lines.append("  ".join("-" * width for width in widths))
    return lines
