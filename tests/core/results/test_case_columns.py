"""A run concluded from its value columns gives the figures and the gate of its cases."""

from __future__ import annotations

import pytest

import oloproof_core as engine
from tests.support.column_cases import as_columns, conclude, figures, judged_cases


def test_the_columns_conclude_as_the_cases_do() -> None:
    cases = judged_cases(200, 1)
    whole = conclude(cases)
    columns = as_columns(cases)
    narrow = conclude(columns)
    assert figures(narrow) == figures(whole)
    assert [m.metric for m in narrow.metrics] == [
        "exact",
        "quality",
        "quality.tone",
        "quality.facts",
    ]
    assert narrow.gate.outcome == whole.gate.outcome
    assert [rule["outcome"] for rule in narrow.gate.to_dict()["rules"]] == [
        rule["outcome"] for rule in whole.gate.to_dict()["rules"]
    ]
    assert narrow.provenance["model_usage"]["judge"]["cost_usd"] is None
    assert narrow.usage().keys() == {"system", "judge"}
    # Nothing but the ids and the arrays (latency and cost among them) is held: no case
    # is kept by the result.
    assert narrow.cases is columns
    assert columns.nbytes() < 136 * len(cases)


def test_a_case_asked_of_the_columns_is_made_from_them() -> None:
    cases = judged_cases(60, 3)
    columns = as_columns(cases)
    made = list(columns)
    assert [case.id for case in made] == [case.id for case in cases]
    assert [case.cluster for case in made] == [case.cluster for case in cases]
    assert [c.error.type if c.error else None for c in made] == [
        c.error.type if c.error else None for c in cases
    ]
    for mine, theirs in zip(made, cases, strict=True):
        for name, verdict in theirs.verdicts.items():
            assert mine.verdicts[name].value == verdict.value
            if verdict.value is not None:
                assert dict(mine.verdicts[name].scores) == dict(verdict.scores)
    assert columns[-1].id == cases[-1].id
    assert len(columns[2:5]) == 3
    with pytest.raises(IndexError):
        columns[60]


def test_a_sub_score_first_seen_late_is_missing_before_it() -> None:
    builder = engine.CaseColumnsBuilder(["quality"])
    builder.add("a", cluster=None, error_type=None, verdicts=[(1.0, {})])
    builder.add("b", cluster=None, error_type=None, verdicts=[(None, {"late": 2.0})])
    builder.add("c", cluster="x", error_type="Boom", verdicts=[(2.0, {"late": 3.0})])
    builder.add("d", cluster=None, error_type=None, verdicts=[(None, None)])
    columns = builder.build()
    assert columns.metric_values("quality", "late").tolist()[2] == 3.0
    assert [v == v for v in columns.metric_values("quality", "late").tolist()] == [
        False, False, True, False,
    ]  # fmt: skip
    assert columns.missing_anything() == 3
    assert columns.cluster_keys() == ["\0a", "\0b", "x", "\0d"]


def test_columns_kept_in_files_conclude_to_the_same_figures_holding_nothing_per_case() -> None:
    cases = judged_cases(400, 7)
    for case in cases:
        case.cluster = None
    policy = {
        "version": 1,
        "rules": [{"metric": "quality", "min": 1.0}, {"missing": {"max_rate": 0.2}}],
    }
    whole = conclude(cases, policy=policy)
    columns = as_columns(cases, spill=True)
    narrow = conclude(columns, policy=policy)
    assert isinstance(columns, engine.SpilledColumns)
    assert figures(narrow) == figures(whole)
    assert isinstance(columns.ids, engine.DeferredIds)
    assert not columns.ids.loaded
    # Concluded from the files: no column was loaded into memory.
    assert columns.nbytes() == 0
    # Asked for, the columns load whole, with the reading order the store gave.
    assert columns.read_order is not None
    expected = engine.stats.ReadOrder.of([case.id for case in cases]).indices
    assert columns.read_order.indices.tolist() == expected.tolist()
    assert columns.nbytes() > len(cases) * 4 * 8
    assert [case.id for case in columns][:3] == ["case_00000", "case_00001", "case_00002"]
    assert columns.ids.loaded


def test_columns_in_files_with_clusters_conclude_as_the_cases_do() -> None:
    cases = judged_cases(300, 8)
    whole = conclude(cases)
    columns = as_columns(cases, spill=True)
    assert figures(conclude(columns)) == figures(whole)


def test_a_score_out_of_range_in_a_file_names_its_case() -> None:
    cases = judged_cases(50, 9)
    cases[31].verdicts["quality"] = engine.Verdict(value=99.0)
    for case in cases:
        case.cluster = None
    with pytest.raises(ValueError, match=r"score 99\.0 of case 31 is outside"):
        conclude(as_columns(cases, spill=True), policy=None)


def test_deferred_ids_that_do_not_match_the_cases_are_refused() -> None:
    ids = engine.DeferredIds(lambda: ["a", "b"], 3)
    assert len(ids) == 3
    assert not ids.loaded
    with pytest.raises(RuntimeError, match="2 case ids for 3 cases"):
        ids[0]
    builder = engine.CaseColumnsBuilder(["exact"], spill=True)
    builder.add("a", cluster=None, error_type=None, verdicts=[(1.0, None)])
    with pytest.raises(ValueError, match="the ids of the 1 cases"):
        builder.build()
