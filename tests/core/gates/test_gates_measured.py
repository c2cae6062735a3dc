"""Latency and cost rules: decided three-valued, refused with their place when they cannot apply."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from oloproof_core.cases.observations import Measurements, ModelCall
from oloproof_core.gates import Gate, PolicyError, load_policy
from oloproof_core.results.reading import load_result
from oloproof_core.results.result import Result
from tests.support.synthetic_runs import make_run, pass_fail


def measured_run(
    latencies: list[float], costs: list[float], verdicts: list[float | None] | None = None
) -> Result:
    run = make_run({"exact_label": verdicts or [1.0] * len(latencies)})
    for case, latency, cost in zip(run.cases, latencies, costs, strict=True):
        call = ModelCall("system", "m", 10, 5, cost, 1.0)
        case.measurements = Measurements(latency_ms=latency, model_calls=[call])
    return run


def gate_of(rules: list[dict[str, object]], run: Result) -> Gate:
    return load_policy({"version": 1, "rules": rules}).decide(run)


def lognormal_run(n: int = 200) -> Result:
    rng = np.random.default_rng(0)
    latencies = rng.lognormal(math.log(500), 0.5, n).tolist()
    return measured_run(latencies, [0.002] * n, pass_fail(int(0.9 * n), n - int(0.9 * n)))


def test_latency_rules_pass_fail_and_straddle() -> None:
    run = lognormal_run()
    p95 = sorted(case.latency_ms for case in run.cases)[int(0.95 * 200) - 1]  # type: ignore[type-var]
    assert gate_of([{"metric": "latency_p95_ms", "max": 5000}], run).outcome == "pass"
    assert gate_of([{"metric": "latency_p50_ms", "max": 100}], run).outcome == "fail"
    gate = gate_of([{"metric": "latency_p95_ms", "max": p95}], run)
    assert gate.outcome == "inconclusive"
    rule = gate.rules[0]
    assert rule.figures["lower"] <= p95 < rule.figures["upper"]
    assert "straddles" in rule.reason
    assert rule.more_cases is not None


def test_failed_cases_count_as_the_slowest_replies() -> None:
    latencies = [100.0] * 100
    clean = measured_run(latencies, [0.0] * 100)
    assert gate_of([{"metric": "latency_p95_ms", "max": 200}], clean).outcome == "pass"
    failing = measured_run(latencies, [0.0] * 100, [1.0] * 94 + [None] * 6)
    gate = gate_of([{"metric": "latency_p95_ms", "max": 200}], failing)
    assert gate.outcome == "inconclusive"
    assert gate.rules[0].figures["upper"] is None  # no upper end: JSON's null
    assert gate.rules[0].figures["n_missing"] == 6


def test_cost_rules_read_the_cap_and_decide_three_ways() -> None:
    run = lognormal_run()  # $0.002 a case, 90 % success: $0.00222 per success
    capped = {"cap_usd": 0.01}
    assert gate_of([{"metric": "cost_per_case_usd", "max": 0.004, **capped}], run).outcome == "pass"
    assert gate_of([{"metric": "cost_per_case_usd", "max": 0.001, **capped}], run).outcome == "fail"
    rules = [{"metric": "cost_per_success_usd", "max": 0.0023, **capped}]
    gate = gate_of(rules, run)
    assert gate.outcome == "inconclusive"
    figures = gate.rules[0].figures
    assert figures["estimate"] == pytest.approx(0.002 / 0.9)
    assert figures["lower"] < 0.0023 < figures["upper"]
    assert gate_of([{**rules[0], "max": 0.004}], run).outcome == "pass"
    assert gate_of([{**rules[0], "max": 0.002}], run).outcome == "fail"


def test_success_can_name_one_criterion() -> None:
    run = make_run({"exact_label": pass_fail(50, 50), "format": pass_fail(100, 0)})
    for case in run.cases:
        case.measurements = Measurements(
            latency_ms=5.0, model_calls=[ModelCall("system", "m", 1, 1, 0.01, 1.0)]
        )
    rule = {"metric": "cost_per_success_usd", "max": 0.015, "cap_usd": 0.02}
    assert gate_of([{**rule, "success": "format"}], run).outcome == "pass"
    assert gate_of([rule], run).outcome == "fail"  # both must pass: half the cases succeed
    with pytest.raises(PolicyError, match="'label' is not a pass/fail criterion"):
        gate_of([{**rule, "success": "label"}], run)


def test_a_case_above_the_cap_is_named() -> None:
    run = measured_run([10.0] * 50, [0.001] * 49 + [0.3])
    with pytest.raises(PolicyError, match=r"case 'case_0049' cost \$0.3, above the stated cap"):
        gate_of([{"metric": "cost_per_case_usd", "max": 0.01, "cap_usd": 0.05}], run)


def write_policy(folder: Path, rule: str) -> Path:
    path = folder / "release.yaml"
    path.write_text(f"version: 1\nrules:\n  - metric: exact_label\n    min: 0.5\n{rule}")
    return path


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("  - {metric: cost_per_case_usd, max: 0.01}", "needs cap_usd"),
        ("  - {metric: latency_p95_ms, min: 100}", "takes 'max' only"),
        ("  - {metric: latency_p95_ms, max: 0}", "must be above 0"),
        ("  - {metric: latency_p95_ms, max: 10, cap_usd: 1}", "applies to cost rules only"),
        (
            "  - {metric: cost_per_case_usd, max: 1, cap_usd: 2, success: x}",
            "cost_per_success_usd only",
        ),
        ("  - {metric: exact_label, min: 0.5, cap_usd: 1}", "latency and cost rules only"),
    ],
)
def test_malformed_rules_are_refused_with_their_line(
    tmp_path: Path, rule: str, message: str
) -> None:
    path = write_policy(tmp_path, rule + "\n")
    with pytest.raises(PolicyError, match=message) as raised:
        load_policy(path)
    assert f"{path}:5" in str(raised.value)


def test_a_run_without_measurements_is_refused_clearly(tmp_path: Path) -> None:
    run = lognormal_run()
    saved = tmp_path / "result.json"
    saved.write_text(json.dumps(run.to_dict(include_cases=False)))
    rules = [{"metric": "latency_p95_ms", "max": 2000}]
    with pytest.raises(PolicyError, match=r"rules\[0\]: latency_p95_ms cannot be read: .*no case"):
        gate_of(rules, load_result(str(saved)))
    unmeasured = make_run({"exact_label": pass_fail(10, 0)})
    with pytest.raises(PolicyError, match="none of the run's 10 cases has a measured latency"):
        gate_of(rules, unmeasured)


def test_refused_before_a_sequential_run_only(tmp_path: Path) -> None:
    path = write_policy(tmp_path, "  - {metric: latency_p50_ms, max: 2000}\n")
    policy = load_policy(path)
    policy.check_declared({"exact_label": (0.0, 1.0)})  # in one process and on the workers
    with pytest.raises(PolicyError, match=f"{path}:5: rules\\[1\\]: latency_p50_ms is decided"):
        policy.as_sequential(50).check_declared({"exact_label": (0.0, 1.0)})


def test_the_result_file_and_the_report_carry_the_figures() -> None:
    run = lognormal_run()
    measured = {item["metric"]: item for item in run.to_dict(include_cases=False)["measured"]}
    assert list(measured) == [
        "latency_p50_ms", "latency_p95_ms", "cost_per_case_usd", "cost_per_success_usd"
    ]  # fmt: skip
    assert measured["cost_per_case_usd"]["unbounded"] is True  # no policy states a cap
    assert measured["cost_per_case_usd"]["interval"]["upper"] is None
    assert measured["latency_p95_ms"]["interval"]["upper"] is not None
    text = str(run)
    assert "latency and cost (measured by oloproof, 95% intervals):" in text
    assert "latency_p95_ms:" in text
    assert "cap_usd" in text


def test_the_notebook_view_shows_the_figures_too() -> None:
    shown = lognormal_run()._repr_html_()
    assert "<td>latency_p95_ms</td>" in shown
    assert "<th>95% interval</th>" in shown
    assert "<td>latency_p50_ms</td>" not in make_run({"exact_label": [1.0]})._repr_html_()


def test_the_plan_says_it_leaves_these_rules_out() -> None:
    from oloproof_core.gates import plan_cases

    policy = load_policy({"version": 1, "rules": [{"metric": "latency_p95_ms", "max": 100}]})
    planned = plan_cases(policy, result=lognormal_run())
    assert planned.rules == ()
    assert any("latency and cost rules are left out" in note for note in planned.notes)


def test_a_run_for_the_workers_checks_these_rules_as_a_run_here_does(tmp_path: Path) -> None:
    from oloproof_core import ConfigProblemsError, run_config_check

    (tmp_path / "bot.py").write_text(
        "from oloproof import system\n\n\n@system(name='bot', version='1')\n"
        "def answer(case):\n    return {'label': 'refund'}\n"
    )
    (tmp_path / "cases.jsonl").write_text(
        '{"id": "a", "input": {"q": 1}, "expected": {"label": "refund"}}\n'
    )
    write_policy(tmp_path, "  - {metric: latency_p95_ms, max: 2000}\n")
    config = {
        "system": "bot:answer",
        "dataset": "cases.jsonl",
        "evaluators": [{"ExactMatch": {"criterion": "exact_label", "field": "label"}}],
        "policy": "release.yaml",
    }
    run_config_check(config, base_dir=str(tmp_path), label="oloproof.yaml")  # accepted
    write_policy(tmp_path, "  - {metric: cost_per_success_usd, max: 0.01}\n")
    with pytest.raises(ConfigProblemsError, match="rules\\[1\\]: cost_per_success_usd needs cap"):
        run_config_check(config, base_dir=str(tmp_path), label="oloproof.yaml")
