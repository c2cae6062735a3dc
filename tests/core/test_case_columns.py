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
    # Nothing but the ids and the arrays is held: no case is kept by the result.
    assert narrow.cases is columns
    assert columns.nbytes() < 120 * len(cases)


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
