"""Plotly figures for the dashboard: estimates with their intervals, per run, release, pair.

Each function returns an HTML fragment (`to_html(full_html=False,
include_plotlyjs=False)`); the page loads plotly.js once from /static/. Plotly
serialises the figure as JSON with `<` and `/` escaped, so no label can close
the script tag; labels are also HTML-escaped because plotly.js renders a few
tags (`<b>`, `<a>`, …) inside text, and a metric or release name must show as
typed.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
from django.utils.safestring import SafeString, mark_safe

from metrics.models import MetricEstimate
from oloproof_core.results.compare import Comparison

_CONFIG = {"displaylogo": False, "responsive": True, "modeBarButtonsToRemove": ["lasso2d"]}
_FONT = {"family": "system-ui, -apple-system, Segoe UI, sans-serif", "size": 13}
_ESTIMATE = "#1f5fbf"
_INTERVAL = "rgba(31,95,191,0.22)"
_NOTHING_OBSERVED = "#b0b7c3"
_THRESHOLD = "#1c2333"
_MISSING = "#b5590f"
_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "cross", "star")
_DASHES = ("solid", "dash", "dashdot", "longdash")
_PALETTE = ("#1f5fbf", "#d9731a", "#2a9d5b", "#b83280", "#6b46c1", "#0f8b8d", "#8c6d1f")


def _label(text: str) -> str:
    return html.escape(text, quote=False)


def _layout(*, height: int, **extra: Any) -> dict[str, Any]:
    layout: dict[str, Any] = {
        "height": height,
        "margin": {"l": 10, "r": 20, "t": 30, "b": 40},
        "font": _FONT,
        "plot_bgcolor": "#ffffff",
        "paper_bgcolor": "#ffffff",
        "showlegend": False,
        "hovermode": "closest",
    }
    layout.update(extra)
    return layout


def _render(figure: go.Figure, *, div_id: str) -> SafeString:
    fragment = figure.to_html(
        full_html=False, include_plotlyjs=False, config=_CONFIG, div_id=div_id
    )
    # Safe to embed: the figure is plotly's own JSON serialisation (with `<` and `/`
    # escaped) and every label in it went through `_label`.
    return mark_safe(fragment)


def _hover(metric: str, estimate: float | None, lower: float, upper: float, extra: str) -> str:
    shown = "nothing observed" if estimate is None else f"{estimate:.4g}"
    return f"<b>{_label(metric)}</b><br>estimate {shown}<br>[{lower:.4g}, {upper:.4g}]{extra}"


def run_interval_chart(
    estimates: Sequence[MetricEstimate],
    *,
    thresholds: Mapping[str, Sequence[float]] | None = None,
    div_id: str = "run-chart",
) -> SafeString:
    """Each metric's estimate as a dot with its interval as a bar, one row per metric.

    The axis is zoomed to the intervals and the gate's thresholds (a tick on the
    metric's row), so a narrow interval near the top of the range stays readable.
    A metric with nothing observed has no dot, only its interval, in grey; missing
    counts are written at the right of their row. Only what is drawn is in the legend.
    """
    marks = thresholds or {}
    names = [_label(item.metric) for item in estimates]
    observed = [item for item in estimates if item.estimate is not None]
    unobserved = [item for item in estimates if item.estimate is None]
    figure = go.Figure()
    if observed:
        figure.add_trace(_interval_bars(observed, colour=_INTERVAL, name="interval"))
        figure.add_trace(
            go.Scatter(
                y=[_label(item.metric) for item in observed],
                x=[item.estimate for item in observed],
                mode="markers",
                marker={"color": _ESTIMATE, "size": 11, "symbol": "diamond"},
                hoverinfo="skip",
                name="estimate",
            )
        )
    if unobserved:
        figure.add_trace(
            _interval_bars(unobserved, colour=_NOTHING_OBSERVED, name="nothing observed")
        )
    ticks = [(item.metric, value) for item in estimates for value in marks.get(item.metric, ())]
    if ticks:
        figure.add_trace(_threshold_ticks(ticks))
    figure.update_layout(**_run_chart_layout(estimates, names, [value for _, value in ticks]))
    return _render(figure, div_id=div_id)


def _run_chart_layout(
    estimates: Sequence[MetricEstimate], names: list[str], thresholds: list[float]
) -> dict[str, Any]:
    low, high = _zoomed_range(estimates, thresholds)
    return _layout(
        height=110 + 44 * max(len(estimates), 1),
        showlegend=True,
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        margin={"l": 10, "r": 90, "t": 40, "b": 40},
        annotations=_missing_notes(estimates),
        xaxis={"range": [low, high], "gridcolor": "#e5e8ee", "zeroline": False},
        yaxis={
            "autorange": "reversed",
            "automargin": True,
            "type": "category",
            "categoryorder": "array",
            "categoryarray": names,
        },
    )


def _interval_bars(estimates: Sequence[MetricEstimate], *, colour: str, name: str) -> go.Bar:
    """Each metric's interval as a horizontal bar."""
    return go.Bar(
        y=[_label(item.metric) for item in estimates],
        x=[item.upper - item.lower for item in estimates],
        base=[item.lower for item in estimates],
        orientation="h",
        marker={"color": colour},
        width=0.45,
        hovertext=[
            _hover(
                item.metric,
                item.estimate,
                item.lower,
                item.upper,
                f"<br>{item.n_observed} observed, {item.n_missing} missing",
            )
            for item in estimates
        ],
        hoverinfo="text",
        name=name,
    )


def _threshold_ticks(ticks: Sequence[tuple[str, float]]) -> go.Scatter:
    """The gate's thresholds as upright ticks across their metric's bar."""
    return go.Scatter(
        y=[_label(metric) for metric, _ in ticks],
        x=[value for _, value in ticks],
        mode="markers",
        marker={
            "symbol": "line-ns-open",
            "size": 30,
            "color": _THRESHOLD,
            "line": {"width": 2.5, "color": _THRESHOLD},
        },
        hovertext=[f"<b>{_label(metric)}</b><br>threshold {value:g}" for metric, value in ticks],
        hoverinfo="text",
        name="threshold",
    )


def _missing_notes(estimates: Sequence[MetricEstimate]) -> list[dict[str, Any]]:
    """`N missing` at the right end of each row that has missing cases."""
    return [
        {
            "x": 1.0,
            "xref": "paper",
            "xanchor": "left",
            "y": _label(item.metric),
            "yref": "y",
            "text": f"{item.n_missing} missing",
            "showarrow": False,
            "font": {"color": _MISSING, "size": 12},
        }
        for item in estimates
        if item.n_missing
    ]


def _zoomed_range(
    estimates: Sequence[MetricEstimate], thresholds: Sequence[float]
) -> tuple[float, float]:
    """The intervals' and thresholds' extent with some room, never far outside the scales."""
    lows = [item.lower for item in estimates] + list(thresholds)
    highs = [item.upper for item in estimates] + list(thresholds)
    scales = [item.score_range for item in estimates if len(item.score_range) == 2]
    scale_low = min((float(scale[0]) for scale in scales), default=min(lows, default=0.0))
    scale_high = max((float(scale[1]) for scale in scales), default=max(highs, default=1.0))
    width = max(scale_high - scale_low, 1e-9)
    low, high = min(lows, default=scale_low), max(highs, default=scale_high)
    pad = max((high - low) * 0.08, width * 0.02)
    edge = width * 0.03
    return max(low - pad, scale_low - edge), min(high + pad, scale_high + edge)


def comparison_chart(comparison: Comparison, *, div_id: str = "compare-chart") -> SafeString:
    """Each metric's paired difference (candidate − baseline) with its interval, and zero."""
    metrics = list(comparison.metrics)
    names = [_label(item.metric) for item in metrics]
    centres = [
        item.difference
        if item.difference is not None
        else (item.interval.lower + item.interval.upper) / 2
        for item in metrics
    ]
    colours = [_difference_colour(item.interval) for item in metrics]
    figure = go.Figure(
        go.Scatter(
            y=names,
            x=centres,
            mode="markers",
            marker={"color": colours, "size": 11, "symbol": "diamond"},
            error_x={
                "type": "data",
                "symmetric": False,
                "array": [
                    item.interval.upper - c for item, c in zip(metrics, centres, strict=True)
                ],
                "arrayminus": [
                    c - item.interval.lower for item, c in zip(metrics, centres, strict=True)
                ],
                "thickness": 2,
                "width": 7,
                "color": "#5b6577",
            },
            hovertext=[_difference_hover(item) for item in metrics],
            hoverinfo="text",
        )
    )
    figure.add_vline(x=0, line={"color": "#1c2333", "width": 1, "dash": "dash"})
    figure.update_layout(
        **_layout(
            height=70 + 44 * max(len(metrics), 1),
            xaxis={
                "title": {"text": "candidate − baseline (paired)"},
                "gridcolor": "#e5e8ee",
                "zeroline": False,
            },
            yaxis={"autorange": "reversed", "automargin": True, "type": "category"},
        )
    )
    return _render(figure, div_id=div_id)


def _difference_colour(interval: Any) -> str:
    """Red when the whole interval is below zero, green when above, grey when it straddles."""
    if interval.upper < 0:
        return "#c0392b"
    return "#2a9d5b" if interval.lower > 0 else "#5b6577"


def _difference_hover(item: Any) -> str:
    shown = "none observed" if item.difference is None else f"{item.difference:+.4g}"
    return (
        f"<b>{_label(item.metric)}</b><br>difference {shown}"
        f"<br>[{item.interval.lower:+.4g}, {item.interval.upper:+.4g}]"
        f"<br>{len(item.regressed)} regressed, {len(item.improved)} improved"
    )
