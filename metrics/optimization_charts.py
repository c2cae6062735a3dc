"""Plotly figures of an optimization: each candidate's val score with its interval, the
score over the budget spent with the best so far, and the frontier of score against cost
and against latency. Labels are escaped as in `metrics.charts`.

Each function returns the figure as JSON (`{"data", "layout", "config"}`), which the page
draws from an element's `data-figure` (static/optimization.js), so the page can replace a
figure as candidates land without loading itself again. A candidate whose val score is
missing (no case could be scored) has no point: a dotted line at its place says so, as 0
would be a score it never had.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from metrics.charts import _CONFIG, _ESTIMATE, _MISSING, _label, _layout

Candidate = Mapping[str, Any]
WINNER = "#2a9d5b"
BUDGET_MEASURES = {
    "metric_calls": ("metric calls spent", 10.0),
    "usd": ("dollars spent (USD)", 0.01),
}
"""What the score-over-budget chart can put on x: its title, and its span when all are 0."""


def figure_json(figure: go.Figure) -> str:
    """The figure and the charts' plotly config, as the page's script reads them."""
    return json.dumps({**json.loads(figure.to_json()), "config": _CONFIG}, separators=(",", ":"))


def val_of(candidate: Candidate) -> tuple[float | None, float | None, float | None]:
    """Estimate, lower and upper bound on val; the estimate is None when it is missing."""
    val = candidate.get("val") or {}
    estimate = val.get("estimate")
    if estimate is None:
        return None, None, None
    lower, upper = val.get("lower"), val.get("upper")
    return (
        float(estimate),
        float(estimate if lower is None else lower),
        float(estimate if upper is None else upper),
    )


def axis_from_zero(values: Sequence[float], *, empty_span: float) -> list[float]:
    """From 0 to a little past the largest value, so equal values sit inside a range that
    starts at 0 rather than in one plotly centres on them (half of it below 0)."""
    top = max(values, default=0.0)
    return [0.0, top * 1.1 if top > 0 else empty_span]


def score_axis(estimates: Sequence[float | None]) -> dict[str, Any]:
    """The val score axis: 0 to 1 at least, wider if a score lies outside."""
    seen = [value for value in estimates if value is not None]
    low, high = min([0.0, *seen]), max([1.0, *seen])
    pad = (high - low) * 0.05
    return {"title": "val score", "range": [low - pad, high + pad], "zeroline": False}


def missing_marks(places: Sequence[tuple[Any, str]]) -> dict[str, list[dict[str, Any]]]:
    """A dotted line and the word "missing" at each place (x value, candidate's name)."""
    shapes = [
        {
            "type": "line",
            "x0": x,
            "x1": x,
            "xref": "x",
            "y0": 0,
            "y1": 1,
            "yref": "paper",
            "line": {"color": _MISSING, "dash": "dot", "width": 1.5},
        }
        for x, _ in places
    ]
    annotations = [
        {
            "x": x,
            "xref": "x",
            "y": 1,
            "yref": "paper",
            "yanchor": "bottom",
            "text": f"{name} missing" if name else "missing",
            "showarrow": False,
            "font": {"color": _MISSING, "size": 11},
        }
        for x, name in places
    ]
    return {"shapes": shapes, "annotations": annotations}


def candidate_name(candidate: Candidate) -> str:
    return f"#{candidate['index']}"


def candidate_scores_chart(candidates: Sequence[Candidate], *, winner: int | None) -> str:
    """Each candidate's val estimate of the objective, with its interval."""
    names = [f"{candidate_name(item)} {_label(str(item['version']))}" for item in candidates]
    figures = [val_of(item) for item in candidates]
    points = go.Scatter(
        x=names,
        y=[estimate for estimate, _, _ in figures],
        mode="markers",
        marker={
            "size": 11,
            "color": [WINNER if item["index"] == winner else _ESTIMATE for item in candidates],
        },
        error_y={
            "type": "data",
            "symmetric": False,
            "array": [_above(figure) for figure in figures],
            "arrayminus": [_below(figure) for figure in figures],
        },
        hovertext=[_hover(name, figure) for name, figure in zip(names, figures, strict=True)],
        hoverinfo="text",
    )
    missing = [(name, "") for name, figure in zip(names, figures, strict=True) if figure[0] is None]
    layout = _layout(
        height=320,
        xaxis={"type": "category"},
        yaxis=score_axis([estimate for estimate, _, _ in figures]),
        **missing_marks(missing),
    )
    layout["margin"] = {**layout["margin"], "t": 40}
    return figure_json(go.Figure(points, layout=layout))


def _above(figure: tuple[float | None, float | None, float | None]) -> float | None:
    estimate, _, upper = figure
    return None if estimate is None or upper is None else upper - estimate


def _below(figure: tuple[float | None, float | None, float | None]) -> float | None:
    estimate, lower, _ = figure
    return None if estimate is None or lower is None else estimate - lower


def _hover(name: str, figure: tuple[float | None, float | None, float | None]) -> str:
    estimate, lower, upper = figure
    if estimate is None:
        return f"{name}<br>val missing: no case scored"
    return f"{name}<br>val {estimate:.3f} [{lower:.3f}, {upper:.3f}]"


def budget_chart(candidates: Sequence[Candidate], *, measure: str) -> str:
    """Each candidate's val score at the budget spent when it was recorded, and the best
    score found so far as a step line."""
    title, empty_span = BUDGET_MEASURES[measure]
    placed = [
        (float((item.get("budget_used") or {})[measure]), val_of(item)[0], item)
        for item in candidates
        if (item.get("budget_used") or {}).get(measure) is not None
    ]
    placed.sort(key=lambda point: (point[0], point[2]["index"]))
    scored = [(x, y, item) for x, y, item in placed if y is not None]
    best_x, best_y = _best_so_far([(x, y) for x, y, _ in scored])
    traces = [
        go.Scatter(
            x=best_x,
            y=best_y,
            mode="lines",
            line={"color": WINNER, "shape": "hv"},
            name="best so far",
            hoverinfo="skip",
        ),
        go.Scatter(
            x=[x for x, _, _ in scored],
            y=[y for _, y, _ in scored],
            mode="markers+text",
            text=[candidate_name(item) for _, _, item in scored],
            textposition="top center",
            marker={"size": 9, "color": _ESTIMATE},
            name="candidate",
            hoverinfo="text",
            hovertext=[
                f"{candidate_name(item)} {_label(str(item['version']))}<br>"
                f"val {y:.3f} after {x:.4g} {title}"
                for x, y, item in scored
            ],
        ),
    ]
    layout = _layout(
        height=300,
        xaxis={
            "title": title,
            "range": axis_from_zero([x for x, _, _ in placed], empty_span=empty_span),
        },
        yaxis=score_axis([y for _, y, _ in placed]),
        **missing_marks([(x, candidate_name(item)) for x, y, item in placed if y is None]),
    )
    layout["margin"] = {**layout["margin"], "t": 40}
    return figure_json(go.Figure(traces, layout=layout))


def _best_so_far(points: Sequence[tuple[float, float]]) -> tuple[list[float], list[float]]:
    xs: list[float] = []
    ys: list[float] = []
    for x, y in points:
        best = max(y, ys[-1]) if ys else y
        xs.append(x)
        ys.append(best)
    return xs, ys


def frontier_chart(candidates: Sequence[Candidate], *, measure: str, title: str) -> str:
    """Val score against a candidate's cost or latency on val; the front is drawn as a line."""
    measured = [
        (float(item[measure]), val_of(item)[0], candidate_name(item))
        for item in candidates
        if item.get(measure) is not None
    ]
    points = [(x, y, name) for x, y, name in measured if y is not None]
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
            line={"color": WINNER, "shape": "hv"},
            hoverinfo="skip",
        ),
    ]
    span = 0.01 if measure == "cost_usd" else 10.0
    layout = _layout(
        height=280,
        xaxis={
            "title": title,
            "range": axis_from_zero([x for x, _, _ in measured], empty_span=span),
        },
        yaxis=score_axis([y for _, y, _ in points]),
        **missing_marks([(x, name) for x, y, name in measured if y is None]),
    )
    return figure_json(go.Figure(traces, layout=layout))


def _front(points: Sequence[tuple[float, float, str]]) -> list[tuple[float, float]]:
    """The candidates no other beats on both counts: lower measure and higher score."""
    front: list[tuple[float, float]] = []
    best = float("-inf")
    for x, y, _ in sorted(points, key=lambda point: (point[0], -point[1])):
        if y > best:
            front.append((x, y))
            best = y
    return front
