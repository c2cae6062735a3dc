"""Plotly figures of an optimization: each candidate's val score with its interval, and
the frontier of score against cost and against latency. Labels are escaped as in
`metrics.charts`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
from django.utils.safestring import SafeString

from metrics.charts import _ESTIMATE, _label, _layout, _render

Candidate = Mapping[str, Any]


def _val(candidate: Candidate) -> tuple[float, float, float]:
    val = candidate.get("val") or {}
    estimate = float(val.get("estimate") or 0.0)
    return estimate, float(val.get("lower") or 0.0), float(val.get("upper") or 0.0)


def candidate_scores_chart(
    candidates: Sequence[Candidate], *, winner: int | None, div_id: str = "candidate-scores"
) -> SafeString:
    """Each candidate's val estimate of the objective, with its interval."""
    names = [_label(str(item["version"])) for item in candidates]
    figures = [_val(item) for item in candidates]
    colours = ["#2a9d5b" if item["index"] == winner else _ESTIMATE for item in candidates]
    bars = go.Scatter(
        x=names,
        y=[estimate for estimate, _, _ in figures],
        mode="markers",
        marker={"size": 11, "color": colours},
        error_y={
            "type": "data",
            "symmetric": False,
            "array": [upper - estimate for estimate, _, upper in figures],
            "arrayminus": [estimate - lower for estimate, lower, _ in figures],
        },
        hovertext=[
            f"{name}<br>val {estimate:.3f} [{lower:.3f}, {upper:.3f}]"
            for name, (estimate, lower, upper) in zip(names, figures, strict=True)
        ],
        hoverinfo="text",
    )
    figure = go.Figure(
        bars, layout=_layout(height=320, yaxis={"title": "val score", "range": [-0.05, 1.05]})
    )
    return _render(figure, div_id=div_id)


def frontier_chart(
    candidates: Sequence[Candidate], *, measure: str, title: str, div_id: str
) -> SafeString:
    """Val score against a candidate's cost or latency on val; the front is drawn as a line."""
    points = [
        (float(item[measure]), _val(item)[0], _label(str(item["version"])))
        for item in candidates
        if item.get(measure) is not None
    ]
    front = _front(points)
    traces = [
        go.Scatter(
            x=[x for x, _, _ in points],
            y=[y for _, y, _ in points],
            mode="markers",
            marker={"size": 10, "color": _ESTIMATE},
            hoverinfo="text",
            hovertext=[f"{name}<br>{title} {x:.4g}<br>val {y:.3f}" for x, y, name in points],
        ),
        go.Scatter(
            x=[x for x, _ in front],
            y=[y for _, y in front],
            mode="lines",
            line={"color": "#2a9d5b", "shape": "hv"},
            hoverinfo="skip",
        ),
    ]
    figure = go.Figure(
        traces, layout=_layout(height=280, xaxis={"title": title}, yaxis={"title": "val score"})
    )
    return _render(figure, div_id=div_id)


def _front(points: Sequence[tuple[float, float, str]]) -> list[tuple[float, float]]:
    """The candidates no other beats on both counts: lower measure and higher score."""
    front: list[tuple[float, float]] = []
    best = float("-inf")
    for x, y, _ in sorted(points, key=lambda point: (point[0], -point[1])):
        if y > best:
            front.append((x, y))
            best = y
    return front
