"""`evaluate(..., until_decided=True)`, `oloproof run --until-decided`, `oloproof plan`."""

from __future__ import annotations

import json

import numpy as np

import oloproof
from oloproof.cli import main
from oloproof_core import InMemoryStore, sequential_order
from oloproof_core.dataset import load_dataset
from oloproof_core.evaluators import ExactMatch, evaluator

POLICY = {"version": 1, "rules": [{"metric": "exact_label", "min": 0.6}]}


def rows(n: int, wrong_every: int = 10):
    return [
        {
            "id": f"c{i:04d}",
            "input": {"i": i},
            "expected": {"label": "x" if i % wrong_every else "y"},
        }
        for i in range(n)
    ]


def answer(payload):
    return {"label": "x"}


def test_until_decided_stops_early_in_content_order():
    result = oloproof.evaluate(
        answer, rows(600), [ExactMatch(criterion="exact_label", field="label")],
        policy=POLICY, store=InMemoryStore(), record=False, until_decided=True, batch=25,
    )  # fmt: skip
    sequential = result.provenance["sequential"]
    assert result.gate.outcome == "pass"
    assert sequential["n_run"] < 600
    assert sequential["n_run"] == 25 * sequential["looks"]
    expected = [row.id for row in sequential_order(load_dataset(rows(600)).rows)]
    assert [case.id for case in result.cases] == expected[: sequential["n_run"]]


def test_until_decided_runs_out_of_cases_inconclusive():
    result = oloproof.evaluate(
        answer, rows(40, wrong_every=3), [ExactMatch(criterion="exact_label", field="label")],
        policy=POLICY, store=InMemoryStore(), record=False, until_decided=True, batch=10,
    )  # fmt: skip
    assert result.gate.outcome == "inconclusive"
    assert result.provenance["sequential"]["n_run"] == 40


def test_sequential_false_pass_at_the_threshold_stays_small():
    # A score whose mean sits exactly at the threshold, checked every 20 cases
    # up to 300: the anytime-valid gate passes rarely (bench/README.md: ≤ 2.5 %).
    rng = np.random.default_rng(0)
    passes = 0
    for rep in range(10):
        scores = rng.beta(6, 4, 300)  # mean 0.6
        data = [{"id": f"r{rep}-{i}", "input": {"s": float(s)}} for i, s in enumerate(scores)]

        @evaluator(criterion="score", reads=("output",), value_type="score")
        def score(case):
            return case.output["s"]

        result = oloproof.evaluate(
            lambda payload: payload, data, [score],
            policy={"version": 1, "rules": [{"metric": "score", "min": 0.6}]},
            store=InMemoryStore(), record=False, until_decided=True, batch=20,
        )  # fmt: skip
        passes += result.gate.outcome == "pass"
    assert passes <= 1


def test_plan_cli_and_library(tmp_path, capsys):
    path = tmp_path / "release.yaml"
    path.write_text(
        "version: 1\nrules:\n  - metric: exact_label\n    min: 0.8\n"
        "  - metric: exact_label\n    no_regression: {margin: 0.02}\n"
    )
    planned = oloproof.plan(str(path), effect=0.1)
    assert planned.rules[0].cases == oloproof_core_proportion(0.9, 0.8)
    assert planned.cases is not None
    assert main(["plan", str(path), "--effect", "0.1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["rules"][0]["cases"] == planned.rules[0].cases
    assert main(["plan", str(path)]) == 0
    assert "cases for 80 % power" in capsys.readouterr().out


def oloproof_core_proportion(rate: float, threshold: float) -> int | None:
    from oloproof_core.stats import proportion_cases_for_power

    return proportion_cases_for_power(rate, threshold)
