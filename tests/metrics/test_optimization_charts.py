"""The optimization page's figures: a missing score is drawn as missing, never at 0; axes
start at 0 with a positive span when every value is equal; the best score so far over
the budget spent; the lineage's generations and edges."""

from __future__ import annotations

import json
from typing import Any

import pytest

from metrics.optimization_charts import budget_chart, candidate_scores_chart, frontier_chart
from metrics.optimization_lineage import generations, lineage_chart, lineage_edges

# Figures only: nothing here touches a database.
pytestmark = pytest.mark.one_database


def candidate(
    index: int,
    estimate: float | None,
    *,
    parents: tuple[int, ...] = (),
    cost: float | None = 0.002,
    calls: int | None = None,
) -> dict[str, Any]:
    val: dict[str, Any] = {"metric": "exact", "estimate": estimate, "n": 4, "n_missing": 0}
    if estimate is not None:
        val |= {"lower": max(0.0, estimate - 0.2), "upper": min(1.0, estimate + 0.2)}
    else:
        val |= {"n": 0, "n_missing": 4}
    return {
        "index": index,
        "version": f"1+opt1.{index}",
        "parents": list(parents),
        "origin": "seed" if not parents else "reflection",
        "val": val,
        "cost_usd": cost,
        "latency_ms": 12.0,
        "budget_used": None if calls is None else {"metric_calls": calls, "usd": calls / 1000},
    }


def test_a_missing_score_has_no_point_and_is_marked_missing_not_zero() -> None:
    figure = json.loads(candidate_scores_chart([candidate(0, None), candidate(1, 0.5)], winner=1))

    [points] = figure["data"]
    assert points["y"] == [None, 0.5]
    assert points["error_y"]["array"][0] is None
    [mark] = figure["layout"]["annotations"]
    assert mark["text"] == "missing"
    assert mark["x"] == points["x"][0]
    assert figure["config"]["displaylogo"] is False


def test_equal_costs_get_an_axis_from_zero_not_one_around_them() -> None:
    same = [candidate(0, 0.25, cost=0.002), candidate(1, 0.75, parents=(0,), cost=0.002)]
    layout = json.loads(frontier_chart(same, measure="cost_usd", title="cost"))["layout"]
    low, high = layout["xaxis"]["range"]
    assert low == 0
    assert 0.002 < high < 0.003

    free = [candidate(0, 0.25, cost=0.0), candidate(1, 0.75, parents=(0,), cost=0.0)]
    low, high = json.loads(frontier_chart(free, measure="cost_usd", title="cost"))["layout"][
        "xaxis"
    ]["range"]
    assert low == 0
    assert high > 0


def test_the_budget_chart_draws_the_best_so_far_and_marks_missing_scores_where_spent() -> None:
    candidates = [
        candidate(0, None, calls=4),
        candidate(1, 0.5, parents=(0,), calls=11),
        candidate(2, 0.25, parents=(1,), calls=18),
        candidate(3, 1.0, parents=(1,), calls=25),
    ]
    figure = json.loads(budget_chart(candidates, measure="metric_calls"))

    best, points = figure["data"]
    assert points["x"] == [11, 18, 25]
    assert points["y"] == [0.5, 0.25, 1.0]
    assert best["y"] == [0.5, 0.5, 1.0]
    assert best["line"]["shape"] == "hv"
    [mark] = figure["layout"]["annotations"]
    assert (mark["x"], mark["text"]) == (4, "#0 missing")
    assert figure["layout"]["xaxis"]["range"][0] == 0
    usd = json.loads(budget_chart(candidates, measure="usd"))
    assert usd["data"][1]["x"] == [0.011, 0.018, 0.025]


def test_the_lineage_places_each_candidate_one_generation_past_its_furthest_parent() -> None:
    candidates = [
        candidate(0, 0.25),
        candidate(1, None, parents=(0,)),
        candidate(2, 0.5, parents=(0,)),
        candidate(3, 1.0, parents=(2,)),
        candidate(4, 0.75, parents=(1, 3)),
    ]
    assert generations(candidates) == {0: 0, 1: 1, 2: 1, 3: 2, 4: 3}
    assert lineage_edges(candidates) == [(0, 1), (0, 2), (2, 3), (1, 4), (3, 4)]

    edges, nodes = json.loads(lineage_chart(candidates, winner=3))["data"]
    assert nodes["x"] == [0, 1, 1, 2, 3]
    assert nodes["text"][1] == "#1 missing"
    assert nodes["marker"]["symbol"][1] == "circle-open"
    assert nodes["marker"]["color"][3] == "#2a9d5b"
    assert edges["x"][:3] == [0, 1, None]
    assert len(edges["x"]) == 3 * 5
