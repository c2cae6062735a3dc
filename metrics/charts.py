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
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
from django.utils.safestring import SafeString, mark_safe

from metrics.models import MetricEstimate
from oloproof_core.compare import Comparison

_CONFIG = {"displaylogo": False, "responsive": True, "modeBarButtonsToRemove": ["lasso2d"]}
_FONT = {"family": "system-ui, -apple-system, Segoe UI, sans-serif", "size": 13}
_ESTIMATE = "#1f5fbf"
_NOTHING_OBSERVED = "#b0b7c3"
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
    estimates: Sequence[MetricEstimate], *, div_id: str = "run-chart"
) -> SafeString:
    """Each metric's estimate as a dot with its interval as a bar, one row per metric.

    A metric with nothing observed has no dot, only its (full-width) interval, in grey.
    """
    names = [_label(item.metric) for item in estimates]
    observed = [item for item in estimates if item.estimate is not None]
    figure = go.Figure()
    figure.add_trace(_interval_bars(estimates, names))
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
    low, high = _range(estimates)
    figure.update_layout(
        **_layout(
            height=70 + 44 * max(len(estimates), 1),
            xaxis={"range": [low, high], "gridcolor": "#e5e8ee", "zeroline": False},
            yaxis={"autorange": "reversed", "automargin": True, "type": "category"},
        )
    )
    return _render(figure, div_id=div_id)


def _interval_bars(estimates: Sequence[MetricEstimate], names: list[str]) -> go.Bar:
    """Each metric's interval as a horizontal bar; grey where nothing was observed."""
    return go.Bar(
        y=names,
        x=[item.upper - item.lower for item in estimates],
        base=[item.lower for item in estimates],
        orientation="h",
        marker={
            "color": [
                _NOTHING_OBSERVED if item.estimate is None else "rgba(31,95,191,0.22)"
                for item in estimates
            ]
        },
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
        name="interval",
    )


def _range(estimates: Sequence[MetricEstimate]) -> tuple[float, float]:
    lows = [float(item.score_range[0]) for item in estimates if len(item.score_range) == 2]
    highs = [float(item.score_range[1]) for item in estimates if len(item.score_range) == 2]
    low = min(lows, default=0.0)
    high = max(highs, default=1.0)
    pad = (high - low) * 0.03
    return low - pad, high + pad


def release_history_chart(
    releases: Sequence[tuple[str, Sequence[MetricEstimate]]], *, div_id: str = "release-chart"
) -> SafeString:
    """Each metric's estimate and interval per release, releases in order along x.

    Criteria are solid lines, sub-scores dotted and hidden until picked in the legend.
    """
    labels = [_label(name) for name, _ in releases]
    metric_names: list[str] = []
    for _, estimates in releases:
        for estimate in estimates:
            if estimate.metric not in metric_names:
                metric_names.append(estimate.metric)
    figure = go.Figure()
    for index, name in enumerate(metric_names):
        xs, ys, plus, minus, hover, sub_score = _release_series(name, labels, releases)
        colour = _PALETTE[index % len(_PALETTE)]
        figure.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                name=_label(name),
                mode="lines+markers",
                line={"color": colour, "dash": "dot" if sub_score else "solid", "width": 2},
                marker={"size": 9},
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": plus,
                    "arrayminus": minus,
                    "color": colour,
                    "thickness": 1.5,
                    "width": 6,
                },
                hovertext=hover,
                hoverinfo="text",
                visible="legendonly" if sub_score else True,
            )
        )
    figure.update_layout(
        **_layout(
            height=380,
            showlegend=True,
            legend={"orientation": "h", "y": -0.18},
            xaxis={"type": "category", "title": {"text": "release"}},
            yaxis={"gridcolor": "#e5e8ee", "title": {"text": "estimate and interval"}},
        )
    )
    return _render(figure, div_id=div_id)


def _release_series(
    name: str, labels: list[str], releases: Sequence[tuple[str, Sequence[MetricEstimate]]]
) -> tuple[list[str], list[float | None], list[float], list[float], list[str], bool]:
    """One metric across releases: x labels, centres, error bars, hover texts, sub-score."""
    xs: list[str] = []
    ys: list[float | None] = []
    plus: list[float] = []
    minus: list[float] = []
    hover: list[str] = []
    sub_score = False
    for label, (_, estimates) in zip(labels, releases, strict=True):
        item = next((e for e in estimates if e.metric == name), None)
        if item is None:
            continue
        sub_score = item.is_sub_score
        centre = item.estimate if item.estimate is not None else (item.lower + item.upper) / 2
        xs.append(label)
        ys.append(centre)
        plus.append(item.upper - centre)
        minus.append(centre - item.lower)
        hover.append(
            _hover(
                name,
                item.estimate,
                item.lower,
                item.upper,
                f"<br>release {label}<br>{item.n_missing} missing",
            )
        )
    return xs, ys, plus, minus, hover, sub_score


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
