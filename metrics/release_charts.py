"""The system page's chart: each metric's estimate and interval across its releases."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
from django.utils.safestring import SafeString

from metrics.charts import (
    _DASHES,
    _MISSING,
    _PALETTE,
    _SYMBOLS,
    _hover,
    _label,
    _layout,
    _render,
    _zoomed_range,
)
from metrics.models import MetricEstimate


def release_history_chart(
    releases: Sequence[tuple[str, Sequence[MetricEstimate]]], *, div_id: str = "release-chart"
) -> SafeString:
    """Each metric's estimate and interval per release, releases in order along x.

    Criteria are solid or dashed lines, sub-scores dotted and hidden until picked in
    the legend. Series are set side by side around each release and differ in marker
    and dash, so two metrics with the same values stay apart. The y axis is zoomed to
    the intervals; a release with missing cases says how many, once, above the plot.
    """
    labels = [_label(name) for name, _ in releases]
    metric_names: list[str] = []
    for _, estimates in releases:
        for estimate in estimates:
            if estimate.metric not in metric_names:
                metric_names.append(estimate.metric)
    spacing = min(0.12, 0.6 / max(len(metric_names), 1))
    figure = go.Figure()
    for index, name in enumerate(metric_names):
        offset = (index - (len(metric_names) - 1) / 2) * spacing
        figure.add_trace(_release_trace(name, index, offset, labels, releases))
    every = [item for _, estimates in releases for item in estimates]
    low, high = _zoomed_range(every, ())
    figure.update_layout(
        **_layout(
            height=400,
            showlegend=True,
            legend={"orientation": "h", "y": -0.2},
            margin={"l": 10, "r": 20, "t": 40, "b": 40},
            annotations=_release_missing_notes(releases),
            xaxis={
                "title": {"text": "release"},
                "tickmode": "array",
                "tickvals": list(range(len(labels))),
                "ticktext": labels,
                "range": [-0.5, len(labels) - 0.5],
                "zeroline": False,
            },
            yaxis={
                "gridcolor": "#e5e8ee",
                "title": {"text": "estimate and interval"},
                "range": [low, high],
            },
        )
    )
    return _render(figure, div_id=div_id)


def _release_trace(
    name: str,
    index: int,
    offset: float,
    labels: list[str],
    releases: Sequence[tuple[str, Sequence[MetricEstimate]]],
) -> go.Scatter:
    xs, ys, plus, minus, hover, sub_score = _release_series(name, labels, releases)
    colour = _PALETTE[index % len(_PALETTE)]
    return go.Scatter(
        x=[x + offset for x in xs],
        y=ys,
        name=_label(name),
        mode="lines+markers",
        cliponaxis=False,
        line={
            "color": colour,
            "dash": "dot" if sub_score else _DASHES[index % len(_DASHES)],
            "width": 2,
        },
        marker={"size": 9, "symbol": _SYMBOLS[index % len(_SYMBOLS)]},
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


def _release_series(
    name: str, labels: list[str], releases: Sequence[tuple[str, Sequence[MetricEstimate]]]
) -> tuple[list[int], list[float], list[float], list[float], list[str], bool]:
    """One metric across releases: positions, centres, error bars and hovers."""
    xs: list[int] = []
    ys: list[float] = []
    plus: list[float] = []
    minus: list[float] = []
    hover: list[str] = []
    sub_score = False
    for position, (label, (_, estimates)) in enumerate(zip(labels, releases, strict=True)):
        item = next((e for e in estimates if e.metric == name), None)
        if item is None:
            continue
        sub_score = item.is_sub_score
        centre = item.estimate if item.estimate is not None else (item.lower + item.upper) / 2
        xs.append(position)
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


def _release_missing_notes(
    releases: Sequence[tuple[str, Sequence[MetricEstimate]]],
) -> list[dict[str, Any]]:
    """`N missing` once above each release with missing cases, not once per metric (the
    metrics share the release's cases, and their notes printed over each other)."""
    notes = []
    for position, (_, estimates) in enumerate(releases):
        missing = max((item.n_missing for item in estimates), default=0)
        if missing:
            notes.append(
                {
                    "x": position,
                    "xref": "x",
                    "y": 1.0,
                    "yref": "paper",
                    "yanchor": "bottom",
                    "text": f"{missing} missing",
                    "showarrow": False,
                    "font": {"color": _MISSING, "size": 11},
                }
            )
    return notes
