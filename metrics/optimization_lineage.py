"""The lineage of an optimization's candidates as a Plotly figure: which came from which.

Each candidate is a node in the column of its generation (the seed's is 0; a child's is
one past its furthest parent's), in the order the search recorded them; a line joins it
to each parent. The winner is green, a candidate with a missing val score hollow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from metrics.charts import _ESTIMATE, _MISSING, _label, _layout
from metrics.optimization_charts import WINNER, Candidate, candidate_name, figure_json, val_of


def generations(candidates: Sequence[Candidate]) -> dict[int, int]:
    """Each candidate's generation; a parent not among the candidates counts as the seed's."""
    found: dict[int, int] = {}
    for item in sorted(candidates, key=lambda candidate: int(candidate["index"])):
        parents = [found.get(int(parent), 0) for parent in item.get("parents") or ()]
        found[int(item["index"])] = 1 + max(parents) if parents else 0
    return found


def lineage_places(candidates: Sequence[Candidate]) -> dict[int, tuple[int, int]]:
    """Each candidate's (generation, row): rows count down within a generation."""
    generation = generations(candidates)
    rows: dict[int, int] = {}
    places: dict[int, tuple[int, int]] = {}
    for index in sorted(generation):
        column = generation[index]
        places[index] = (column, -rows.get(column, 0))
        rows[column] = rows.get(column, 0) + 1
    return places


def lineage_edges(candidates: Sequence[Candidate]) -> list[tuple[int, int]]:
    """(parent, child) for every parent a recorded candidate names that is recorded too."""
    known = {int(item["index"]) for item in candidates}
    return [
        (int(parent), int(item["index"]))
        for item in candidates
        for parent in item.get("parents") or ()
        if int(parent) in known
    ]


def lineage_chart(candidates: Sequence[Candidate], *, winner: int | None) -> str:
    places = lineage_places(candidates)
    edge_x: list[float | None] = []
    edge_y: list[float | None] = []
    for parent, child in lineage_edges(candidates):
        edge_x += [places[parent][0], places[child][0], None]
        edge_y += [places[parent][1], places[child][1], None]
    ordered = sorted(candidates, key=lambda item: int(item["index"]))
    nodes = go.Scatter(
        x=[places[int(item["index"])][0] for item in ordered],
        y=[places[int(item["index"])][1] for item in ordered],
        mode="markers+text",
        text=[_node_text(item) for item in ordered],
        textposition="top center",
        marker=_node_marker(ordered, winner),
        hoverinfo="text",
        hovertext=[_node_hover(item) for item in ordered],
    )
    edges = go.Scatter(
        x=edge_x, y=edge_y, mode="lines", line={"color": "#9aa5b5", "width": 1.5}, hoverinfo="skip"
    )
    depth = max((column for column, _ in places.values()), default=0)
    height = max((-row for _, row in places.values()), default=0)
    layout = _layout(
        height=max(180, 60 + 46 * (height + 1)),
        xaxis={
            "title": "generation",
            "range": [-0.3, depth + 0.9],
            "dtick": 1,
            "zeroline": False,
            "showgrid": False,
        },
        yaxis={"visible": False, "range": [-height - 0.6, 0.6]},
    )
    return figure_json(go.Figure([edges, nodes], layout=layout))


def _node_text(item: Candidate) -> str:
    estimate = val_of(item)[0]
    return f"{candidate_name(item)} {'missing' if estimate is None else f'{estimate:.3f}'}"


def _node_hover(item: Candidate) -> str:
    parents = ", ".join(f"#{parent}" for parent in item.get("parents") or ()) or "none"
    return (
        f"{candidate_name(item)} {_label(str(item['version']))}<br>{_label(str(item['origin']))}"
        f" · parents {parents}<br>val {_node_text(item).split(' ', 1)[1]}"
    )


def _node_marker(ordered: Sequence[Candidate], winner: int | None) -> Mapping[str, Any]:
    colours = [
        WINNER
        if int(item["index"]) == winner
        else (_MISSING if val_of(item)[0] is None else _ESTIMATE)
        for item in ordered
    ]
    symbols = ["circle-open" if val_of(item)[0] is None else "circle" for item in ordered]
    return {"size": 14, "color": colours, "symbol": symbols, "line": {"width": 2}}
