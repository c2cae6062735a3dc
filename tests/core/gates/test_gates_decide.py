"""Deciding runs: each rule's outcome, figures, reason and readout; the combined gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oloproof import evaluate, system
from oloproof.evaluators import ExactMatch
from oloproof_core.gates import Gate, combine, load_policy
from oloproof_core.results.store import InMemoryStore
from oloproof_core.stats import clopper_pearson
from tests.support.synthetic_runs import make_run, pass_fail


def gate_of(rules: list[dict[str, object]], run: object, **kwargs: object) -> Gate:
    policy = load_policy({"version": 1, "rules": rules})
    return policy.decide(run, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        (["pass", "pass"], "pass"),
        (["pass", "inconclusive"], "inconclusive"),
        (["inconclusive", "fail", "pass"], "fail"),
        (["fail"], "fail"),
    ],
)
def test_gate_passes_only_when_every_rule_passes(outcomes: list[str], expected: str) -> None:
    assert combine(outcomes) == expected  # type: ignore[arg-type]


def test_min_rule_pass_fail_and_inconclusive_follow_the_exact_interval() -> None:
    clear = make_run({"exact_label": pass_fail(200, 0)})  # lower 0.9817
    poor = make_run({"exact_label": pass_fail(150, 50)})  # upper 0.81
    close = make_run({"exact_label": pass_fail(30, 0)})  # [0.884, 1]
    assert gate_of([{"metric": "exact_label", "min": 0.95}], clear).outcome == "pass"
    assert gate_of([{"metric": "exact_label", "min": 0.9}], poor).outcome == "fail"
    gate = gate_of([{"metric": "exact_label", "min": 0.9}], close)
    assert gate.outcome == "inconclusive"
    rule = gate.rules[0]
    expected = clopper_pearson(30, 30)
    assert rule.figures["lower"] == expected.lower
    assert rule.figures["upper"] == 1.0
    assert rule.figures["threshold"] == 0.9
    assert "straddles 0.9" in rule.reason
    assert rule.reason.endswith(".")
    assert rule.reason.count(". ") == 0


def test_max_rule_on_a_score_metric() -> None:
    low_scores = make_run({"latency_score": [0.1] * 100}, value_types={"latency_score": "score"})
    high_scores = make_run({"latency_score": [0.9] * 100}, value_types={"latency_score": "score"})
    assert gate_of([{"metric": "latency_score", "max": 0.5}], low_scores).outcome == "pass"
    assert gate_of([{"metric": "latency_score", "max": 0.5}], high_scores).outcome == "fail"


def test_readme_style_one_line_verdict_and_json() -> None:
    run = make_run({"exact_label": pass_fail(30, 0)})
    gate = gate_of([{"metric": "exact_label", "min": 0.9}, {"missing": {"max_count": 0}}], run)
    text = str(gate)
    assert text.startswith(
        "gate INCONCLUSIVE: exact_label ≥ 0.9 inconclusive (interval 0.884–1.000 straddles 0.9; "
        "about "
    )
    assert text.endswith(
        "cases in all for an 80 % chance of passing); missing ≤ 0 pass (0 of 30 missing)"
    )
    data = json.loads(json.dumps(gate.to_dict()))
    assert data["outcome"] == "inconclusive"
    assert [rule["outcome"] for rule in data["rules"]] == ["inconclusive", "pass"]
    assert data["rules"][0]["more_cases"]["count"] > 0
    assert data["rules"][0]["more_cases"]["method"]


def test_readout_makes_the_rule_conclusive_at_the_observed_rate() -> None:
    run = make_run({"exact_label": pass_fail(57, 3)})  # 0.95 observed, threshold 0.9
    rule = gate_of([{"metric": "exact_label", "min": 0.9}], run).rules[0]
    extra = rule.more_cases.count  # type: ignore[union-attr]
    assert extra is not None
    assert extra > 0
    total = 60 + extra
    assert clopper_pearson(round(0.95 * total), total).lower > 0.9
    smaller = 60 + extra // 2
    assert clopper_pearson(round(0.95 * smaller), smaller).lower < 0.9


def test_readout_with_missing_cases_and_on_the_threshold() -> None:
    run = make_run({"exact_label": pass_fail(57, 1, missing=2)})
    rule = gate_of([{"metric": "exact_label", "min": 0.9}], run).rules[0]
    assert rule.outcome == "inconclusive"
    assert rule.more_cases is not None
    assert rule.more_cases.count is not None
    assert "missing cases widen it" in rule.reason
    on_line = make_run({"exact_label": pass_fail(9, 1)})
    rule = gate_of([{"metric": "exact_label", "min": 0.9}], on_line).rules[0]
    assert rule.more_cases is not None
    assert rule.more_cases.count is None
    assert "sits on the threshold" in rule.reason


def test_readout_for_scores_projects_the_betting_interval() -> None:
    scores = [0.8, 0.9, 1.0, 0.95, 0.85] * 8
    run = make_run({"quality": scores}, value_types={"quality": "score"})
    rule = gate_of([{"metric": "quality", "min": 0.8}], run).rules[0]
    assert rule.outcome == "inconclusive"
    assert rule.more_cases is not None
    assert rule.more_cases.count is not None
    assert "projection" in rule.more_cases.method


def test_missing_rule_counts_cases_overall_and_per_metric() -> None:
    run = make_run(
        {"exact_label": pass_fail(90, 5, missing=5), "known_label": [None] * 2 + [1.0] * 98}
    )
    overall = gate_of([{"missing": {"max_count": 5}}], run).rules[0]
    assert overall.outcome == "fail"  # 7 cases have something missing
    assert overall.figures["n_missing"] == 7
    per_metric = gate_of([{"metric": "known_label", "missing": {"max_rate": 0.02}}], run)
    assert per_metric.outcome == "pass"
    assert per_metric.rules[0].rule == "known_label missing ≤ 2%"
    rate = gate_of([{"metric": "exact_label", "missing": {"max_rate": 0.04}}], run)
    assert rate.outcome == "fail"
    assert (
        "5 of 100 verdicts for exact_label are missing (5%), above the cap of 4%"
        in rate.rules[0].reason
    )


def test_require_rule_checks_presence_and_observations_including_sub_scores() -> None:
    run = make_run(
        {"known_label": [1.0] * 10, "empty": [None] * 10},
        sub_scores={"known_label": {"format": [1.0] * 10}},
    )
    assert gate_of([{"require": ["known_label", "known_label.format"]}], run).outcome == "pass"
    failed = gate_of([{"require": ["known_label.accuracy", "empty"]}], run).rules[0]
    assert failed.outcome == "fail"
    assert failed.figures == {"absent": ["known_label.accuracy"], "unobserved": ["empty"]}


def test_sub_score_bound_rule() -> None:
    run = make_run(
        {"known_label": [1.0] * 100}, sub_scores={"known_label": {"format": [0.2] * 100}}
    )
    gate = gate_of([{"metric": "known_label.format", "min": 0.5}], run)
    assert gate.outcome == "fail"


def test_policy_confidence_recomputes_the_intervals() -> None:
    run = make_run({"exact_label": pass_fail(97, 3)})
    at_run_level = gate_of([{"metric": "exact_label", "min": 0.91}], run)
    stricter = load_policy(
        {"version": 1, "confidence": 0.999, "rules": [{"metric": "exact_label", "min": 0.91}]}
    ).decide(run)
    assert at_run_level.outcome == "pass"
    assert stricter.outcome == "inconclusive"
    assert stricter.confidence == 0.999
    assert stricter.rules[0].figures["lower"] == clopper_pearson(97, 100, 0.999).lower


REGRESSION = [{"metric": "exact_label", "no_regression": {"margin": 0.02}}]


def paired_runs(base: list[float | None], cand: list[float | None]) -> tuple[object, object]:
    return (
        make_run({"exact_label": base}, system=("bot", "1"), run_id="b"),
        make_run({"exact_label": cand}, system=("bot", "2"), run_id="c"),
    )


def test_no_regression_pass_fail_and_inconclusive() -> None:
    base, same = paired_runs([1.0] * 450 + [0.0] * 50, [1.0] * 450 + [0.0] * 50)
    assert gate_of(REGRESSION, same, baseline=base).outcome == "pass"
    base, worse = paired_runs([1.0] * 500, [1.0] * 400 + [0.0] * 100)
    failed = gate_of(REGRESSION, worse, baseline=base).rules[0]
    assert failed.outcome == "fail"
    assert failed.figures["regressed"] == 100
    assert failed.figures["improved"] == 0
    assert "a regression" in failed.reason
    base, few = paired_runs([1.0] * 40, [1.0] * 39 + [0.0])
    unsure = gate_of(REGRESSION, few, baseline=base)
    assert unsure.outcome == "inconclusive"
    assert unsure.baseline == {"label": "bot@1 (run b)", "run_id": "b"}
    assert unsure.rules[0].more_cases is not None


def test_baseline_from_the_policy_file_and_explicit_override(tmp_path: Path) -> None:
    base, worse = paired_runs([1.0] * 500, [1.0] * 400 + [0.0] * 100)
    base.to_json(str(tmp_path / "v1.json"))  # type: ignore[attr-defined]
    (tmp_path / "release.yaml").write_text(
        "version: 1\nbaseline: {run: v1.json}\nrules:\n"
        "  - metric: exact_label\n    no_regression: {margin: 0.02}\n",
        encoding="utf-8",
    )
    policy = load_policy(tmp_path / "release.yaml")
    assert policy.decide(worse).outcome == "fail"  # type: ignore[arg-type]
    assert policy.decide(worse, baseline=worse).outcome == "pass"  # type: ignore[arg-type]


def test_release_and_last_approved_baselines_come_from_the_store() -> None:
    store = InMemoryStore()
    base, worse = paired_runs([1.0] * 500, [1.0] * 400 + [0.0] * 100)
    store.record_run(base)  # type: ignore[arg-type]
    for baseline in ({"release": "bot@1"}, {"release": "1"}, {"last_approved": True}):
        policy = load_policy({"version": 1, "baseline": baseline, "rules": REGRESSION})
        assert policy.decide(worse, store=store).outcome == "fail"  # type: ignore[arg-type]
    assert store.find_baseline("bot", "7") is None
    assert store.find_baseline("other", None) is None


@system(name="support-bot", version="1")
def answer(case: dict[str, str]) -> dict[str, str]:
    return {"label": "refund" if "refund" in case["question"].lower() else "other"}


def test_spec_example_prints_the_gate(example_dir: Path, store: InMemoryStore) -> None:
    (example_dir / "release.yaml").write_text(
        "version: 1\nrules:\n  - metric: exact_label\n    min: 0.9\n  - missing: {max_count: 0}\n",
        encoding="utf-8",
    )
    result = evaluate(
        system=answer,
        dataset="data/example.jsonl",
        evaluators=[ExactMatch(criterion="exact_label", field="label")],
        policy="release.yaml",
        store=store,
    )
    assert str(result.gate).startswith(
        "gate INCONCLUSIVE: exact_label ≥ 0.9 inconclusive (interval 0.884–1.000 straddles 0.9"
    )
    assert result.provenance["policy"]["digest"] == load_policy("release.yaml").digest
    assert result.to_dict()["gate"]["outcome"] == "inconclusive"
    assert str(result.gate) in str(result)
    plain = evaluate(
        system=answer,
        dataset="data/example.jsonl",
        evaluators=[ExactMatch(criterion="exact_label", field="label")],
        store=store,
    )
    assert plain.gate is None


def test_evaluate_with_last_approved_baseline_from_its_store(
    example_dir: Path, store: InMemoryStore
) -> None:
    evaluators = [ExactMatch(criterion="exact_label", field="label")]
    evaluate(system=answer, dataset="data/example.jsonl", evaluators=evaluators, store=store)
    policy = {
        "version": 1,
        "baseline": {"last_approved": True},
        "rules": [{"metric": "exact_label", "no_regression": {"margin": 0.5}}],
    }
    result = evaluate(
        system=answer,
        dataset="data/example.jsonl",
        evaluators=evaluators,
        policy=policy,
        store=store,
    )
    assert result.gate.outcome == "pass"
    assert result.gate.baseline["run_id"] == "mem-1"


@pytest.mark.parametrize(
    ("execution", "words"),
    [
        ({"isolation": "thread", "measurements": "not protected"}, "in oloproof's own process"),
        (
            {
                "isolation": "process",
                "measurements": "not protected",
                "sandbox": {"on": False, "reason": "bubblewrap is not installed"},
            },
            "without a sandbox (bubblewrap is not installed)",
        ),
    ],
)
def test_a_gate_on_figures_the_system_could_reach_says_so(execution, words) -> None:
    run = make_run({"exact_label": pass_fail(200, 0)})
    run.provenance["execution"] = execution

    gate = gate_of([{"metric": "exact_label", "min": 0.95}], run)

    assert gate.outcome == "pass"
    assert "decided on figures that are not protected" in str(gate)
    assert words in str(gate)
    assert gate.to_dict()["caveat"] == gate.caveat


def test_a_gate_on_protected_figures_has_no_caveat() -> None:
    run = make_run({"exact_label": pass_fail(200, 0)})
    run.provenance["execution"] = {"isolation": "process", "measurements": "protected"}

    gate = gate_of([{"metric": "exact_label", "min": 0.95}], run)

    assert gate.caveat is None
    assert "not protected" not in str(gate)
