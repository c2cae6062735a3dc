"""Repeats in the engine: every case run k times, judged per repeat, figured per case."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

import oloproof_core as engine
from oloproof_core.errors import ConfigError
from oloproof_core.judging.evaluators import CaseView, ExactMatch, evaluator
from oloproof_core.results.store import InMemoryStore

ROWS = [{"id": f"q{i}", "input": {"q": i}, "expected": {"label": "a"}} for i in range(6)]


def _flaky_system() -> tuple[Any, Counter[int]]:
    """q0, q1 always right; q2, q3 always wrong; q4, q5 right on their 1st and 3rd call."""
    calls: Counter[int] = Counter()

    def system(question: dict[str, int]) -> dict[str, str]:
        q = question["q"]
        calls[q] += 1
        if q < 2:
            return {"label": "a"}
        if q < 4:
            return {"label": "b"}
        return {"label": "a" if calls[q] % 2 else "b"}

    return system, calls


def _run(system: Any, evaluators: list[Any], store: Any = None, **options: Any) -> Any:
    return engine.run_evaluation(
        system=system,
        dataset=ROWS,
        evaluators=evaluators,
        store=InMemoryStore() if store is None else store,
        isolation="thread",
        concurrency=1,
        **options,
    )


def test_each_repeat_is_a_call_and_the_figures_take_the_case_as_the_unit() -> None:
    system, calls = _flaky_system()
    result = _run(system, [ExactMatch(criterion="ok", field="label")], repeats=3)
    assert calls == dict.fromkeys(range(6), 3)
    assert [case.id for case in result.cases[:3]] == ["q0#r1", "q0#r2", "q0#r3"]
    assert [case.repeat for case in result.cases[:3]] == [1, 2, 3]
    metric = result.metric("ok")
    assert metric.estimate == pytest.approx((1 + 1 + 0 + 0 + 2 / 3 + 2 / 3) / 6)
    assert metric.n_clusters == 6
    assert "cluster" in metric.method
    figures = result.provenance["repeats"]["metrics"][0]
    assert figures["pass_at_k"]["estimate"] == pytest.approx(4 / 6)
    assert figures["pass_all_k"]["estimate"] == pytest.approx(2 / 6)
    assert figures["pass_at_k"]["lower"] < 4 / 6 < figures["pass_at_k"]["upper"]
    assert (figures["stable_pass"], figures["stable_fail"], figures["flaky"]) == (2, 2, 2)
    assert figures["flaky_cases"] == ["q4", "q5"]
    assert "pass@3 0.667" in str(result)
    assert "2 flaky (q4, q5)" in str(result)
    assert result.to_dict()["cases"][1]["repeat"] == 2


def test_a_run_without_repeats_keeps_its_shape() -> None:
    system, calls = _flaky_system()
    result = _run(system, [ExactMatch(criterion="ok", field="label")])
    assert sum(calls.values()) == 6
    assert "repeats" not in result.provenance
    assert [case.id for case in result.cases] == [row["id"] for row in ROWS]
    assert "repeat" not in result.to_dict()["cases"][0]
    assert result.metric("ok").n_clusters is None


JUDGED: list[str] = []
"""Outside the evaluator: a function evaluator's version covers what its closure holds."""


def test_no_repeat_reads_another_repeats_verdict() -> None:
    judged = JUDGED
    judged.clear()

    @evaluator(criterion="judge", reads=("output",))
    def judge(case: CaseView) -> bool:
        JUDGED.append(case.output["label"])
        return True

    store = InMemoryStore()
    _run(lambda question: {"label": "same"}, [judge], store=store, repeats=3)
    # Every case's output is the same, and the judge reads the output alone: cases share
    # a verdict as they do in any run, but each repeat is judged on its own.
    assert len(judged) == 3
    _run(lambda question: {"label": "same"}, [judge], store=store, repeats=3)
    assert len(judged) == 3  # a second run reads each repeat's own verdict back
    _run(lambda question: {"label": "same"}, [judge], store=store, repeats=4)
    assert len(judged) == 4  # only the fourth repeat is new


def test_a_missing_repeat_bounds_the_case_figures() -> None:
    def system(question: dict[str, int]) -> dict[str, str]:
        if question["q"] == 0:
            raise RuntimeError("down")
        return {"label": "a"}

    result = _run(system, [ExactMatch(criterion="ok", field="label")], repeats=2)
    figures = result.provenance["repeats"]["metrics"][0]
    assert figures["pass_at_k"]["n_missing"] == 1
    assert figures["incomplete"] == 1
    assert figures["pass_at_k"]["estimate"] == 1.0
    assert figures["pass_at_k"]["lower"] < 5 / 6


@pytest.mark.parametrize("bad", [0, -2, True, 2.0, "3", None, 101])
def test_bad_repeats_are_refused_before_any_case_runs(bad: Any) -> None:
    system, calls = _flaky_system()
    with pytest.raises(ConfigError, match="repeats must be"):
        _run(system, [ExactMatch(criterion="ok", field="label")], repeats=bad)
    assert not calls


def test_an_id_that_looks_like_a_repeat_keeps_its_own_repeats() -> None:
    rows = [
        {"id": "a", "input": {"n": 1}, "expected": {"label": "a"}},
        {"id": "a#r1", "input": {"n": 2}, "expected": {"label": "a"}},
    ]
    result = engine.run_evaluation(
        system=lambda question: {"label": "a" if question["n"] == 1 else "b"},
        dataset=rows,
        evaluators=[ExactMatch(criterion="ok", field="label")],
        store=InMemoryStore(),
        isolation="thread",
        repeats=2,
    )
    assert [case.id for case in result.cases] == ["a#r1", "a#r2", "a#r1#r1", "a#r1#r2"]
    figures = result.provenance["repeats"]["metrics"][0]
    assert (figures["stable_pass"], figures["stable_fail"]) == (1, 1)


def test_a_run_that_stops_when_decided_adds_whole_cases_and_decides_on_their_means(
    tmp_path: Any,
) -> None:
    # 60 cases, each right on two tries in three: the gate's rule (at least 0.3) passes
    # on the case means once enough cases are in, batch after batch of ten cases.
    calls: Counter[int] = Counter()

    def system(question: dict[str, int]) -> dict[str, str]:
        calls[question["q"]] += 1
        return {"label": "a" if calls[question["q"]] % 3 else "b"}

    rows = [{"id": f"q{i}", "input": {"q": i}, "expected": {"label": "a"}} for i in range(60)]
    result = _until_decided(system, rows, tmp_path, batch=10, repeats=3)
    assert result.gate is not None
    assert result.gate.outcome == "pass", result.gate
    run = result.provenance["sequential"]
    assert run["horizon"] == 60
    assert run["n_run"] % 10 == 0
    assert run["n_run"] < 60
    # Every case run was run three times, whole: no case's repeats split between batches.
    assert set(calls.values()) == {3}
    assert len(calls) == run["n_run"]
    assert len(result.cases) == 3 * run["n_run"]
    assert result.metric("ok").estimate == pytest.approx(2 / 3)


def test_a_sequential_gate_refuses_clusters_of_the_dataset_s_own(tmp_path: Any) -> None:
    rows = [
        {"id": f"q{i}", "input": {"q": i}, "expected": {"label": "a"}, "cluster": f"c{i // 3}"}
        for i in range(12)
    ]
    with pytest.raises(Exception, match="clustered by the dataset"):
        _until_decided(lambda question: {"label": "a"}, rows, tmp_path, batch=4, repeats=2)


def _until_decided(system: Any, rows: list[dict[str, Any]], folder: Any, **options: Any) -> Any:
    """`run_until_decided` in this process, the gate asking for a pass rate of 0.3."""
    policy = folder / "release.yaml"
    policy.write_text("version: 1\nrules:\n  - metric: ok\n    min: 0.3\n")
    return engine.run_until_decided(
        system=system,
        dataset=rows,
        evaluators=[ExactMatch(criterion="ok", field="label")],
        store=InMemoryStore(),
        policy=str(policy),
        isolation="thread",
        concurrency=1,
        **options,
    )


def _config_folder(tmp_path: Any) -> dict[str, Any]:
    (tmp_path / "data.jsonl").write_text(
        '{"id": "a", "input": {"q": 1}, "expected": {}}\n'
        '{"id": "b", "input": {"q": 2}, "expected": {}, "cluster": "c"}\n'
    )
    (tmp_path / "bot.py").write_text("def answer(question):\n    return {}\n")
    return {
        "system": "bot.py:answer",
        "dataset": "data.jsonl",
        "evaluators": [{"ExactMatch": {"criterion": "ok"}}],
        "repeats": 2,
        "isolation": "thread",
    }


def test_a_submitted_config_with_repeats_queues_each_case_as_its_repeats(tmp_path: Any) -> None:
    """What the workers record for a submitted run is what `evaluate` runs in one process:
    the same repeat ids, clusters and digests, under the same dataset digest."""
    checked = engine.run_config_check(
        _config_folder(tmp_path), base_dir=str(tmp_path), label="oloproof.yaml"
    )
    loaded = engine.repeated_dataset(engine.load_dataset(str(tmp_path / "data.jsonl")), 2)
    assert (checked.dataset.digest, len(checked.dataset)) == (loaded.digest, 4)
    queued = list(checked.dataset.rows())
    assert [(row.id, row.cluster, row.repeat) for row in queued] == [
        ("a#r1", "a", 1),
        ("a#r2", "a", 2),
        ("b#r1", "c", 1),
        ("b#r2", "c", 2),
    ]
    assert queued == loaded.rows
    assert checked.config.repeats == 2


def test_rows_read_back_by_id_get_their_repeat_index() -> None:
    rows = engine.load_dataset(
        [{"id": "q#r1#r2", "input": {}}, {"id": "q#r10", "input": {}}, {"id": "x", "input": {}}]
    ).rows
    assert [row.repeat for row in engine.with_repeat_index(rows)] == [2, 10, 0]
    assert engine.case_id_of("q#r1#r2") == "q#r1"
    assert engine.repeat_id("q#r1", 2) == "q#r1#r2"


def test_a_run_over_the_cases_limit_counts_every_repeat(tmp_path: Any) -> None:
    with pytest.raises(engine.ConfigProblemsError, match="run 2 times per case has 4 cases"):
        engine.run_config_check(
            _config_folder(tmp_path),
            base_dir=str(tmp_path),
            label="oloproof.yaml",
            max_cases=(3, "OLOPROOF_MAX_CASES"),
        )


def test_a_result_file_keeps_the_repeats_and_the_notebook_view_shows_them(tmp_path: Any) -> None:
    from oloproof_core.results.reading import load_result

    system, _ = _flaky_system()
    result = _run(system, [ExactMatch(criterion="ok", field="label")], repeats=3)
    result.to_json(str(tmp_path / "run.json"))
    read = load_result(str(tmp_path / "run.json"))
    assert [case.repeat for case in read.cases] == [1, 2, 3] * 6
    assert read.provenance["repeats"] == result.provenance["repeats"]
    assert "2 stable pass, 2 stable fail, 2 flaky (q4, q5)" in read._repr_html_()


def test_a_dataset_with_clusters_keeps_them_as_the_unit() -> None:
    rows = [
        {"id": f"q{i}", "input": {"q": i}, "expected": {"label": "a"}, "cluster": f"c{i // 3}"}
        for i in range(6)
    ]
    system, _ = _flaky_system()
    result = engine.run_evaluation(
        system=system,
        dataset=rows,
        evaluators=[ExactMatch(criterion="ok", field="label")],
        store=InMemoryStore(),
        isolation="thread",
        concurrency=1,
        repeats=2,
    )
    assert {case.cluster for case in result.cases} == {"c0", "c1"}
    assert result.metric("ok").n_clusters == 2
    assert result.provenance["repeats"]["cases"] == 6


def test_the_figures_read_from_value_columns_are_the_cases_figures() -> None:
    """A worker concludes a run from its value columns: the same pass@k, pass^k and flaky
    cases as from the cases whole, a failed repeat included."""
    from oloproof_core.evaluation.repeat_figures import repeat_figures

    system, _ = _flaky_system()
    evaluators = [ExactMatch(criterion="ok", field="label")]
    cases = list(_run(system, evaluators, repeats=3).cases)
    cases[0].verdicts["ok"] = engine.Verdict(value=None, error="the evaluator failed")
    builder = engine.CaseColumnsBuilder(["ok"])
    for case in cases:
        verdict = case.verdicts["ok"]
        builder.add(
            case.id, cluster=case.cluster, error_type=None, verdicts=[(verdict.value, {})],
            model_calls=(),
        )  # fmt: skip
    columns = builder.build()
    from_columns = repeat_figures(columns, evaluators, 3, 0.95)
    assert from_columns == repeat_figures(cases, evaluators, 3, 0.95)
    assert from_columns["metrics"][0]["incomplete"] == 1  # q0, its first repeat missing


def test_a_sequential_no_regression_rule_pairs_the_case_means(tmp_path: Any) -> None:
    # The baseline and the candidate answer alike (each case right on its 1st and 3rd
    # call): the paired difference of the case means is 0, within a margin of 0.3.
    def flaky() -> Any:
        calls: Counter[int] = Counter()

        def system(question: dict[str, int]) -> dict[str, str]:
            calls[question["q"]] += 1
            return {"label": "a" if calls[question["q"]] % 2 else "b"}

        return system

    rows = [{"id": f"q{i}", "input": {"q": i}, "expected": {"label": "a"}} for i in range(40)]
    options: dict[str, Any] = {"isolation": "thread", "concurrency": 1, "repeats": 3}
    evaluators = [ExactMatch(criterion="ok", field="label")]
    store = InMemoryStore()
    baseline = engine.run_evaluation(
        system=flaky(), dataset=rows, evaluators=evaluators, store=store, **options
    )
    policy = tmp_path / "release.yaml"
    policy.write_text("version: 1\nrules:\n  - metric: ok\n    no_regression: {margin: 0.3}\n")
    result = engine.run_until_decided(
        system=flaky(),
        dataset=rows,
        evaluators=evaluators,
        store=store,
        policy=str(policy),
        baseline=baseline,
        batch=10,
        **options,
    )
    assert result.gate is not None
    assert result.gate.outcome == "pass", result.gate
    assert result.provenance["sequential"]["horizon"] == 40
