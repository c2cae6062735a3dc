"""Latency and cost figures from a run's columns (what a worker concludes from) are the
figures of its cases whole: the same estimates, intervals, gate and projections."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

import oloproof_core as engine
from oloproof_core.cases.case import CaseResult
from oloproof_core.cases.observations import Measurements, ModelCall
from oloproof_core.gates import PolicyError
from tests.support.column_cases import as_columns, conclude, figures, judged_cases


def measured_cases(n: int, seed: int) -> list[CaseResult]:
    """Judged cases with latencies (failed ones timed too) and costs, one call unpriced."""
    draw = random.Random(seed)
    cases = judged_cases(n, seed)
    for i, case in enumerate(cases):
        price = None if i == 5 else round(draw.uniform(0.001, 0.004), 6)
        calls = [
            ModelCall("system", "m", 10, 3, price, 12.0),
            ModelCall("judge", "j", 5, 1, 0.0, 3.0),
        ]
        latency = draw.lognormvariate(6.0, 0.6)
        case.measurements = Measurements(latency_ms=latency, model_calls=calls)
    return cases


def policy(*rules: dict[str, Any]) -> dict[str, Any]:
    return {"version": 1, "rules": list(rules)}


LATENCY = {"metric": "latency_p95_ms", "max": 5000}  # 13 of 300 failed: no finite upper end
MEDIAN = {"metric": "latency_p50_ms", "max": 1000}
SLOW_MEDIAN = {"metric": "latency_p50_ms", "max": 100}
COST = {"metric": "cost_per_success_usd", "max": 0.01, "cap_usd": 0.005, "success": "exact"}
MEAN_COST = {"metric": "cost_per_case_usd", "max": 0.0026, "cap_usd": 0.005}


@pytest.mark.parametrize("spill", [False, True], ids=["in memory", "in files"])
def test_the_columns_give_the_figures_and_the_gate_of_the_cases(spill: bool) -> None:
    cases = measured_cases(300, 11)
    rules = policy(MEDIAN, COST, MEAN_COST, LATENCY, SLOW_MEDIAN)
    whole = conclude(cases, policy=rules)
    narrow = conclude(as_columns(cases, spill=spill), policy=rules)

    assert figures(narrow) == figures(whole)
    measured = {item["metric"]: item for item in narrow.provenance["measured"]}
    assert list(measured) == [
        "latency_p50_ms", "latency_p95_ms", "cost_per_case_usd", "cost_per_success_usd"
    ]  # fmt: skip
    # Failed cases have no reply time; the unpriced call leaves one cost unknown.
    assert measured["latency_p95_ms"]["n_missing"] == sum(c.error is not None for c in cases)
    assert measured["cost_per_case_usd"]["n_missing"] == 1
    outcomes = [rule["outcome"] for rule in narrow.gate.to_dict()["rules"]]
    assert outcomes == ["pass", "pass", "inconclusive", "inconclusive", "fail"]
    assert measured["latency_p95_ms"]["unbounded"] is True
    # The inconclusive rule's projection repeats the cases: the same figure either way.
    assert narrow.gate.rules[2].more_cases == whole.gate.rules[2].more_cases
    assert narrow.gate.rules[2].more_cases.count is not None


def test_columns_in_files_read_no_case_id_for_the_figures() -> None:
    cases = measured_cases(200, 12)
    for case in cases:
        case.cluster = None
    columns = as_columns(cases, spill=True)
    result = conclude(columns, policy=policy(MEDIAN, COST))
    assert result.gate.outcome == "pass"
    assert isinstance(columns.ids, engine.DeferredIds)
    assert not columns.ids.loaded  # the reading order came from the store's sorted read


def test_a_cost_above_the_cap_names_its_case_from_the_columns() -> None:
    cases = measured_cases(100, 13)
    cases[42].measurements.model_calls[0] = ModelCall("system", "m", 10, 3, 0.5, 12.0)
    for columns in (as_columns(cases), as_columns(cases, spill=True)):
        with pytest.raises(PolicyError, match=r"case 'case_00042' cost \$0\.5, above the stated"):
            conclude(columns, policy=policy(COST))


def test_columns_without_latencies_give_no_figures_and_refuse_the_rules() -> None:
    cases = judged_cases(80, 14)  # no latency measured on any case
    for columns in (as_columns(cases), as_columns(cases, spill=True)):
        result = conclude(columns, policy=None)
        assert "measured" not in result.provenance
        with pytest.raises(PolicyError, match="none of the run's 80 cases has a measured latency"):
            conclude(columns, policy=policy(LATENCY))
    spilled = as_columns(cases, spill=True)
    assert spilled.measured_columns() is None
    assert spilled.nbytes() == 0  # looked at a block at a time, nothing loaded


def test_value_columns_that_keep_no_measurements_say_so() -> None:
    columns = engine.CaseColumns(["a", "b"], {}, {})
    result = engine.Result(metrics=[], cases=columns, provenance={})
    gate = engine.gates.load_policy(policy(LATENCY))
    with pytest.raises(PolicyError, match="read from value columns that keep none"):
        gate.decide(result)
    assert math.isnan(as_columns(judged_cases(3, 1)).latency[0])


def test_the_report_reads_the_figures_the_conclusion_kept() -> None:
    from oloproof_core.results.measured_text import measured_html, measured_lines

    result = conclude(measured_cases(200, 3), policy=policy(MEAN_COST))
    kept = result.provenance["measured"]
    lines, table = measured_lines(result), measured_html(result)
    # Worked out again from every case, the block is the same.
    del result.provenance["measured"]
    assert measured_lines(result) == lines
    assert measured_html(result) == table
    # What the report shows is what the conclusion kept (the result file's figures):
    # a kept figure changed shows changed.
    result.provenance["measured"] = [dict(item) for item in kept]
    result.provenance["measured"][0]["estimate"] = 12345.0
    assert "latency_p50_ms: 12,345.0 [" in "\n".join(measured_lines(result))
    # Kept at another level, they are worked out afresh at the run's.
    for item in result.provenance["measured"]:
        item["confidence"] = 0.5
    assert measured_lines(result) == lines
