"""The system page's chart of a metric across releases: a release's missing cases are said
once above it, not once per metric over each other ('8 missing8 missing8 missing')."""

from __future__ import annotations

import json
import re

from metrics.models import MetricEstimate
from metrics.release_charts import release_history_chart


def _estimate(metric: str, value: float, missing: int) -> MetricEstimate:
    return MetricEstimate(
        metric=metric,
        criterion=metric.split(".")[0],
        estimate=value,
        lower=value - 0.05,
        upper=value + 0.05,
        method="clopper-pearson exact",
        confidence=0.95,
        n_observed=142,
        n_missing=missing,
        value_type="pass_fail",
        score_range=[0, 1],
    )


def _figure(html: str) -> dict[str, object]:
    found = re.search(
        r"Plotly\.newPlot\(\s*\"[^\"]+\",\s*(\[.*?\]),\s*(\{.*?\})\s*,\s*\{", html, re.S
    )
    assert found, html[:400]
    return {"data": json.loads(found.group(1)), "layout": json.loads(found.group(2))}


def test_a_releases_missing_cases_are_said_once_above_it() -> None:
    metrics = ("exact_label", "reply_quality", "tone")
    releases = [
        ("bot@1", [_estimate(name, 0.8, 0) for name in metrics]),
        ("bot@2", [_estimate(name, 0.7, 8) for name in metrics]),
    ]

    figure = _figure(str(release_history_chart(releases)))

    notes = [note for note in figure["layout"]["annotations"] if "missing" in note["text"]]
    assert [(note["x"], note["text"]) for note in notes] == [(1, "8 missing")]
    assert all("text" not in trace or not any(trace["text"]) for trace in figure["data"])
