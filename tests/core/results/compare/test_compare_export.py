"""The case-by-case view of a comparison and its export: library (`Comparison.cases`,
`Comparison.export`) and `oloproof compare --export`, on real evaluations."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from oloproof import compare, evaluate, system
from oloproof.cli import main
from oloproof.evaluators import ExactMatch, evaluator
from oloproof_core import ConfigError
from oloproof_core.results.result import Result

ROWS = [
    {"id": f"c{i}", "input": {"q": i}, "expected": {"label": "odd" if i % 2 else "even"}}
    for i in range(12)
]


def run(version: str, *, wrong: set[int], broken: set[int]) -> Result:
    @system(name="bot", version=version)
    def answer(case: dict[str, Any]) -> dict[str, str]:
        if case["q"] in broken:
            raise RuntimeError(f"backend down on {case['q']}")
        label = "odd" if case["q"] % 2 else "even"
        # A spreadsheet would run this as a formula if it were written as it is.
        return {"label": '=HYPERLINK("http://x")' if case["q"] in wrong else label}

    return evaluate(
        answer, ROWS, [ExactMatch(criterion="exact_label", field="label")], isolation="thread"
    )


@pytest.fixture(scope="module")
def pair() -> tuple[Result, Result]:
    """Candidate: wrong on 2, 4 and 6 (baseline wrong on 3), missing on 10 and 11."""
    return run("1", wrong={3}, broken=set()), run("2", wrong={2, 4, 6}, broken={10, 11})


def test_cases_filter_and_order(pair: tuple[Result, Result]) -> None:
    comparison = compare(*pair)
    cases = comparison.cases()
    assert len(cases) == 12
    assert cases.counts() == {"all": 12, "changed": 4, "regressed": 3, "improved": 1, "missing": 2}
    assert [case.case_id for case in comparison.cases(show="regressed")] == ["c2", "c4", "c6"]
    assert [case.case_id for case in comparison.cases(show="improved")] == ["c3"]
    assert [case.case_id for case in comparison.cases(show="missing")] == ["c10", "c11"]
    by_change = [case.case_id for case in comparison.cases(order="change")]
    assert by_change[:3] == ["c2", "c4", "c6"]
    assert by_change[-2:] == ["c10", "c11"], "cases without a change come last"
    assert comparison.cases(order="-change")[0].case_id == "c3"
    row = comparison.cases(show="regressed")[0]
    assert row.status == "regressed"
    assert row.metrics[0].to_dict() == {"baseline": 1.0, "candidate": 0.0, "change": -1.0}
    missing = comparison.cases(show="missing")[0]
    assert missing.metrics[0].candidate is None
    assert missing.metrics[0].change is None


def test_a_filter_or_metric_not_offered_is_a_clear_error(pair: tuple[Result, Result]) -> None:
    comparison = compare(*pair)
    with pytest.raises(ConfigError, match="show must be one of all, changed"):
        comparison.cases(show="worse")
    with pytest.raises(ConfigError, match="no metric 'tone' in both runs; compared metrics: exact"):
        comparison.cases(metric="tone")
    with pytest.raises(ConfigError, match=r"name a \.csv or \.jsonl file"):
        comparison.export("cases.xlsx", baseline=pair[0], candidate=pair[1])


def test_the_wording_says_what_the_difference_and_p_are_over(pair: tuple[Result, Result]) -> None:
    item = compare(*pair).metrics[0]
    text = " ".join(item.pair_counts().sentences())
    assert "over the 10 cases with a value in both runs: 3 regressed, 1 improved" in text
    assert "6 unchanged" in text
    assert "over all 12 cases: 2 missing from the candidate are not counted" in text
    assert "The 2 pairs with a missing side could outweigh the net change (2 cases)" in text
    assert item.to_dict()["explanation"] == item.pair_counts().sentences()


def test_the_csv_export_has_both_sides_and_inert_formulas(
    pair: tuple[Result, Result], tmp_path: Path
) -> None:
    baseline, candidate = pair
    path = tmp_path / "cases.csv"
    assert compare(*pair).export(path, baseline=baseline, candidate=candidate) == 12
    rows = list(csv.DictReader(path.open(encoding="utf-8", newline="")))
    assert [row["case_id"] for row in rows] == [f"c{i}" for i in range(12)]
    two = rows[2]
    assert two["status"] == "regressed"
    assert json.loads(two["input"]) == {"q": 2}
    assert json.loads(two["expected"]) == {"label": "even"}
    assert json.loads(two["baseline_output"]) == {"label": "even"}
    assert two["candidate_output"] == '{"label": "=HYPERLINK(\\"http://x\\")"}'
    assert (two["exact_label baseline"], two["exact_label candidate"]) == ("1.0", "0.0")
    assert two["exact_label change"] == "-1.0", "numbers are not escaped"
    ten = rows[10]
    assert ten["status"] == "missing"
    assert ten["candidate_error"] == "RuntimeError: backend down on 10"
    assert ten["exact_label change"] == ""


def test_a_text_cell_starting_like_a_formula_is_escaped(tmp_path: Path) -> None:
    rows = [{"id": "=1+1", "input": {"q": "-2"}, "expected": {"label": "x"}}]

    @system(name="echo", version="1")
    def echo(case: dict[str, Any]) -> str:
        return "+cmd|' /C calc'!A0"

    @evaluator(criterion="answered", reads=("output",))
    def answered(case: Any) -> bool:
        return bool(case.output)

    checks = [answered]
    first = evaluate(echo, rows, checks, isolation="thread")
    second = evaluate(echo, rows, checks, isolation="thread")
    path = tmp_path / "x.csv"
    compare(first, second).export(path, baseline=first, candidate=second)
    row = next(csv.DictReader(path.open(encoding="utf-8", newline="")))
    assert row["case_id"] == "'=1+1"
    assert row["input"] == '{"q": "-2"}', "JSON text starts with a brace: no formula"
    assert row["candidate_output"] == "'+cmd|' /C calc'!A0"


def test_the_jsonl_export_filters_like_the_grid(
    pair: tuple[Result, Result], tmp_path: Path
) -> None:
    baseline, candidate = pair
    path = tmp_path / "changed.jsonl"
    compare(*pair).export(
        path, baseline=baseline, candidate=candidate, show="changed", order="change"
    )
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [record["case_id"] for record in records] == ["c2", "c4", "c6", "c3"]
    assert records[0]["baseline"] == {"output": {"label": "even"}, "error": None}
    assert records[0]["metrics"]["exact_label"] == {
        "baseline": 1.0,
        "candidate": 0.0,
        "change": -1.0,
    }
    assert records[3]["status"] == "improved"


def test_the_cli_exports_like_the_library(
    pair: tuple[Result, Result], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline, candidate = pair
    baseline.to_json(str(tmp_path / "v1.json"))
    candidate.to_json(str(tmp_path / "v2.json"))
    files = [str(tmp_path / "v1.json"), str(tmp_path / "v2.json")]
    out = tmp_path / "cli.jsonl"
    args = ["compare", *files, "--export", str(out), "--show", "changed", "--order", "change"]
    assert main(args) == 0
    assert "wrote 4 cases to" in capsys.readouterr().err
    library = tmp_path / "library.jsonl"
    compare(baseline, candidate).export(
        library, baseline=baseline, candidate=candidate, show="changed", order="change"
    )
    assert out.read_text(encoding="utf-8") == library.read_text(encoding="utf-8")
    assert main(["compare", *files, "--export", str(tmp_path / "x.txt")]) == 3
    assert "name a .csv or .jsonl file" in capsys.readouterr().err
    assert main(["compare", *files, "--export", str(out), "--metric", "tone"]) == 3
    assert "no metric 'tone' in both runs" in capsys.readouterr().err
