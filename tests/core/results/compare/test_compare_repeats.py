"""Flaky or regressed: each case of two repeated runs judged against its own noise."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as scipy_stats

from oloproof_core.errors import ConfigError
from oloproof_core.results.compare import case_of, compare_runs
from oloproof_core.results.compare._case_tests import (
    fisher_two_sided,
    permutation_two_sided,
    tarone_holm,
)
from oloproof_core.results.result import Result
from tests.support.synthetic_runs import make_run


def repeated(
    outcomes: dict[str, list[float]], version: str, value_type: str = "pass_fail"
) -> Result:
    """A run whose case `c` gave `outcomes[c]` over its repeats, ids and clusters as a
    repeated run records them."""
    ids = [f"{case}#r{j}" for case, row in outcomes.items() for j in range(1, len(row) + 1)]
    values: list[float | None] = [value for row in outcomes.values() for value in row]
    clusters = [case_of(case_id) for case_id in ids]
    run = make_run(
        {"right": values},
        ids=ids,
        clusters=clusters,
        system=("bot", version),
        value_types={"right": value_type},
    )
    run.provenance["repeats"] = {"repeats": len(next(iter(outcomes.values())))}
    return run


STEADY = {"s1": [1.0] * 5, "s2": [0.0] * 5}


def test_a_case_that_goes_from_every_pass_to_every_fail_is_regressed() -> None:
    before = repeated({"a": [1.0] * 5, "b": [0.0] * 5, **STEADY}, "1")
    after = repeated({"a": [0.0] * 5, "b": [1.0] * 5, **STEADY}, "2")
    cases = compare_runs(before, after).repeat_cases()
    a, b = cases.of("a"), cases.of("b#r3")
    assert (a.status, b.status) == ("regressed", "improved")
    evidence = a.metrics[0]
    assert evidence.text == "5/5 → 0/5"
    # Fisher's two-sided p for 5/5 against 0/5: 2 / C(10, 5).
    assert evidence.p_value == pytest.approx(2 / 252)
    # Tarone keeps a and b (the two cases that could move), Holm doubles the smaller p.
    assert evidence.adjusted_p_value == pytest.approx(2 * 2 / 252)
    assert [case.case_id for case in cases.filter("regressed")] == ["a"]
    assert [case.case_id for case in cases.filter("improved")] == ["b"]
    assert (cases.of("s1").status, cases.of("s2").status) == ("stable_pass", "stable_fail")
    assert cases.of("s1").metrics[0].adjusted_p_value is None  # could never move


def test_two_of_five_to_three_of_five_is_flaky_not_regressed() -> None:
    before = repeated({"f": [1.0, 0.0, 1.0, 0.0, 0.0], **STEADY}, "1")
    after = repeated({"f": [1.0, 1.0, 0.0, 1.0, 0.0], **STEADY}, "2")
    found = compare_runs(before, after).repeat_cases().of("f")
    assert found.status == "flaky"
    assert found.metrics[0].text == "2/5 → 3/5"
    assert found.metrics[0].p_value == pytest.approx(1.0)


def test_without_repeats_a_change_is_only_changed() -> None:
    before = make_run({"right": [1.0, 0.0, 1.0]}, ids=["q1#r1", "q2", "q3"])
    after = make_run({"right": [0.0, 1.0, 1.0]}, ids=["q1#r1", "q2", "q3"])
    comparison = compare_runs(before, after)
    cases = comparison.repeat_cases()
    assert not cases.with_repeats
    # Without repeats an id is a case of its own, even one that looks like a repeat's.
    assert [(case.case_id, case.status) for case in cases] == [
        ("q1#r1", "changed"),
        ("q2", "changed"),
        ("q3", "stable_pass"),
    ]
    assert cases.filter("regressed") == []
    assert comparison.cases().repeat_cases is None  # rows carry no repeat evidence


def test_the_grid_filter_keeps_every_repeat_of_the_chosen_cases(tmp_path: Path) -> None:
    before = repeated({"a": [1.0] * 5, "f": [1.0, 0.0, 1.0, 0.0, 0.0], **STEADY}, "1")
    after = repeated({"a": [0.0] * 5, "f": [0.0, 1.0, 0.0, 1.0, 1.0], **STEADY}, "2")
    comparison = compare_runs(before, after)
    regressed = comparison.cases(repeat_status="regressed")
    assert regressed.ids() == [f"a#r{j}" for j in range(1, 6)]
    assert regressed[0].repeat_case is not None
    assert regressed[0].repeat_case.status == "regressed"
    assert regressed.repeat_counts()["flaky"] == 1
    # Combined with a value filter: the flaky case's repeats whose value went up.
    assert comparison.cases(show="improved", repeat_status="flaky").ids() == [
        "f#r2",
        "f#r4",
        "f#r5",
    ]
    written = comparison.export(
        tmp_path / "out.jsonl", baseline=before, candidate=after, repeat_status="regressed"
    )
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert written == 5
    assert rows[0]["repeat_case"]["metrics"]["right"]["evidence"] == "5/5 → 0/5"
    with pytest.raises(ConfigError, match="cases must be one of"):
        comparison.cases(repeat_status="worse")


def test_scores_use_the_permutation_test_of_the_mean() -> None:
    before = repeated({"a": [0.9, 1.0, 0.95, 0.9, 1.0], "b": [0.5] * 5}, "1", "score")
    after = repeated({"a": [0.1, 0.0, 0.2, 0.1, 0.0], "b": [0.5] * 5}, "2", "score")
    cases = compare_runs(before, after).repeat_cases()
    assert cases.of("a").status == "regressed"
    assert cases.of("a").metrics[0].p_value == pytest.approx(2 / 252)
    assert cases.of("b").status == "unchanged"


def test_the_level_is_the_comparisons_unless_named() -> None:
    before = repeated({"a": [1.0] * 5, "b": [0.0] * 5, **STEADY}, "1")
    after = repeated({"a": [0.0] * 5, "b": [1.0] * 5, **STEADY}, "2")
    comparison = compare_runs(before, after, confidence=0.99)
    assert comparison.repeat_cases().alpha == pytest.approx(0.01)
    # At 0.01, Tarone's rule keeps no case (each could reach only 0.0079 > 0.01 / 2).
    assert comparison.repeat_cases().filter("regressed") == []
    assert [c.case_id for c in comparison.repeat_cases(alpha=0.05).filter("regressed")] == ["a"]
    with pytest.raises(ConfigError, match="alpha must be between 0 and 1"):
        comparison.repeat_cases(alpha=1.5)


@pytest.mark.parametrize("tries", [(1, 1), (3, 3), (5, 5), (4, 6), (8, 8)])
def test_fisher_agrees_with_scipy_on_every_table(tries: tuple[int, int]) -> None:
    first, second = tries
    for a in range(first + 1):
        for b in range(second + 1):
            table = [[a, first - a], [b, second - b]]
            expected = scipy_stats.fisher_exact(table).pvalue
            assert fisher_two_sided(a, first, b, second)[0] == pytest.approx(expected, rel=1e-9)


def test_the_smallest_reachable_p_value_is_the_least_over_the_margins() -> None:
    for total in range(11):
        tables = range(max(0, total - 5), min(5, total) + 1)
        least = min(fisher_two_sided(a, 5, total - a, 5)[0] for a in tables)
        assert all(fisher_two_sided(a, 5, total - a, 5)[1] == least for a in tables)


def test_the_permutation_test_agrees_with_scipy() -> None:
    rng = np.random.default_rng(5)
    for _ in range(5):
        before, after = rng.random(5).round(1), rng.random(6).round(1)
        found = scipy_stats.permutation_test(
            (after, before),
            lambda x, y: abs(np.mean(x) - np.mean(y)),
            permutation_type="independent",
            alternative="greater",
            n_resamples=np.inf,
        )
        p_value, smallest = permutation_two_sided(before.tolist(), after.tolist())
        assert p_value == pytest.approx(found.pvalue)
        assert smallest <= p_value


def test_tarone_holm_leaves_out_cases_that_cannot_reach_the_level() -> None:
    # Five cases could reach 0.008; a thousand never move. Holm over all 1005 would need
    # p ≤ 0.05 / 1005; Tarone's rule keeps the five.
    p_values = [0.008] + [0.3] * 4 + [1.0] * 1000
    smallest = [0.008] * 5 + [1.0] * 1000
    adjusted = tarone_holm(p_values, smallest, 0.05)
    assert adjusted[0] == pytest.approx(0.04)
    assert adjusted[1:5] == [pytest.approx(1.0)] * 4
    assert adjusted[5:] == [None] * 1000
    assert tarone_holm([], [], 0.05) == []


def test_family_wise_error_across_200_unchanged_cases_stays_at_alpha() -> None:
    """200 cases whose release did not change them, each passing with its own chance
    (many flaky), 10 repeats a side, 2000 comparisons: the share with any case marked
    regressed or improved stays at most α = 0.05.

    Sized as `tests/core/stats/test_stats_multiplicity.py`: more than 138 of 2000 at a
    true rate of 0.05 has probability 9e-5. Fixed seed, so deterministic (30 of 2000
    marked a case). Catches a missing correction: uncorrected Fisher marks some case in
    82 % of these comparisons.
    """
    rng = np.random.default_rng(20261207)
    cases, repeats, runs, alpha = 200, 10, 2000, 0.05
    chances = rng.uniform(0.0, 1.0, size=cases)
    with_error = uncorrected = 0
    for _ in range(runs):
        before = rng.binomial(repeats, chances)
        after = rng.binomial(repeats, chances)
        tests = [
            fisher_two_sided(int(a), repeats, int(b), repeats)
            for a, b in zip(before, after, strict=True)
        ]
        adjusted = tarone_holm([t[0] for t in tests], [t[1] for t in tests], alpha)
        with_error += any(value is not None and value <= alpha for value in adjusted)
        uncorrected += any(t[0] <= alpha for t in tests)
    assert with_error <= 138
    assert uncorrected > 1200  # the family is large enough for the correction to matter


def test_the_command_says_when_neither_run_repeated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from oloproof.cli import main

    make_run({"right": [1.0, 1.0]}, system=("bot", "1")).to_json(str(tmp_path / "a.json"))
    make_run({"right": [0.0, 1.0]}, system=("bot", "2")).to_json(str(tmp_path / "b.json"))
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 0
    assert "against their own noise" not in capsys.readouterr().out  # not asked, no repeats
    asked = [str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--cases", "regressed"]
    assert main(["compare", *asked]) == 0
    out = capsys.readouterr().out
    assert "neither run repeated its cases" in out
    assert "1 changed, 1 stable pass" in out
    assert "regressed cases: 0" in out
    assert main(["compare", *asked[:2], str(tmp_path / "b.json"), *asked[2:]]) == 3
    assert "--cases lists one pair's cases" in capsys.readouterr().err
