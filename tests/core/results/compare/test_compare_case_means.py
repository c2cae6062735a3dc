"""Runs that repeated each case a different number of times, compared on case means."""

from __future__ import annotations

import numpy as np
import pytest

from oloproof_core.evaluation.repeats import different_cases
from oloproof_core.results.compare import case_of, compare_runs
from oloproof_core.results.compare._paired import paired_figures
from oloproof_core.results.result import Result
from tests.support.synthetic_runs import make_run


def repeated(
    outcomes: dict[str, list[float | None]], version: str, clusters: dict[str, str] | None = None
) -> Result:
    """A run whose case `c` gave `outcomes[c]` over its repeats, as a repeated run records
    them: ids `c#r<j>`, each repeat in its case's cluster (or the dataset's)."""
    ids = [f"{case}#r{j}" for case, row in outcomes.items() for j in range(1, len(row) + 1)]
    values = [value for row in outcomes.values() for value in row]
    own = clusters or {}
    labels = [own.get(case_of(case_id), case_of(case_id)) for case_id in ids]
    run = make_run({"right": values}, ids=ids, clusters=labels, system=("bot", version))
    run.provenance["repeats"] = {"repeats": len(next(iter(outcomes.values())))}
    return run


THREE = {"a": [1.0, 1.0, 1.0], "b": [1.0, 0.0, 1.0], "c": [0.0, 0.0, 0.0], "d": [1.0, 1.0, 0.0]}
FIVE = {
    "a": [1.0, 0.0, 0.0, 0.0, 0.0],
    "b": [1.0, 1.0, 1.0, 1.0, 0.0],
    "c": [0.0, 0.0, 0.0, 0.0, 0.0],
    "d": [1.0, 0.0, 1.0, 0.0, 1.0],
}


def test_the_figures_pair_each_cases_mean_over_its_own_repeats() -> None:
    comparison = compare_runs(repeated(THREE, "1"), repeated(FIVE, "2"))
    item = comparison.metric("right")
    before = np.array([1.0, 2 / 3, 0.0, 2 / 3])
    after = np.array([0.2, 0.8, 0.0, 0.6])
    assert item.baseline_estimate == pytest.approx(before.mean())
    assert item.candidate_estimate == pytest.approx(after.mean())
    assert item.difference == pytest.approx((after - before).mean())
    expected = paired_figures(
        before, after, pass_fail=False, low=0.0, high=1.0, confidence=0.95, keys=list("abcd")
    )
    assert (item.interval.lower, item.interval.upper) == pytest.approx(
        (expected.interval.lower, expected.interval.upper)
    )
    assert item.p_value == pytest.approx(expected.p_value)
    assert (item.n_pairs, item.n_complete, item.n_clusters) == (4, 4, None)
    assert (item.regressed, item.improved) == (("a", "d"), ("b",))
    assert "pairs: each case's mean over each run's own repeats (of a pass/fail" in item.method
    assert (comparison.n_cases, comparison.n_common, comparison.only_in_candidate) == (4, 4, ())
    assert comparison.to_dict()["paired"] == "case means"
    assert item.pair_counts().n_pairs == 4


def test_the_rows_stay_the_repeats_for_the_grid_and_the_tests_against_noise() -> None:
    comparison = compare_runs(repeated(THREE, "1"), repeated(FIVE, "2"))
    rows = {row.case_id: row for row in comparison.cases()}
    assert len(rows) == 20
    assert (rows["a#r3"].in_baseline, rows["a#r4"].in_baseline) == (True, False)
    assert rows["a#r4"].in_candidate
    assert comparison.repeats_only_in[1][:2] == ("a#r4", "a#r5")
    found = comparison.repeat_cases().of("a")
    assert found.metrics[0].text == "3/3 → 1/5"


def test_a_repeat_without_a_value_leaves_its_case_missing_on_that_side() -> None:
    gapped = {**THREE, "b": [1.0, None, 1.0]}
    item = compare_runs(repeated(gapped, "1"), repeated(FIVE, "2")).metric("right")
    assert item.n_complete == 3
    assert item.pair_counts().missing_from_baseline == 1
    # Not the mean of the two repeats it has (1.0): its failure may be the missing one.
    assert item.baseline_estimate == pytest.approx((1.0 + 0.0 + 2 / 3) / 3)


def test_a_datasets_own_clusters_stay_the_unit() -> None:
    clusters = {"a": "left", "b": "left", "c": "right", "d": "right"}
    item = compare_runs(repeated(THREE, "1", clusters), repeated(FIVE, "2", clusters)).metric(
        "right"
    )
    assert item.n_clusters == 2
    assert item.paired_units.clusters == ("left", "left", "right", "right")


def test_a_run_once_against_a_repeated_run_pairs_the_single_try_with_the_mean() -> None:
    once = make_run({"right": [1.0, 1.0, 0.0, 1.0]}, ids=list("abcd"), system=("bot", "1"))
    item = compare_runs(once, repeated(FIVE, "2")).metric("right")
    assert item.n_pairs == 4
    assert item.difference == pytest.approx(np.mean([0.2 - 1, 0.8 - 1, 0.0, 0.6 - 1]))


def provenance(digest: str, repeats: int = 1, unrepeated: str = "") -> dict[str, object]:
    dataset: dict[str, object] = {"digest": digest}
    if unrepeated:
        dataset["unrepeated_digest"] = unrepeated
    found: dict[str, object] = {"dataset": dataset}
    if repeats > 1:
        found["repeats"] = {"repeats": repeats}
    return found


def test_runs_of_one_dataset_at_any_repeat_count_are_the_same_cases() -> None:
    once = provenance("d")
    assert different_cases(once, provenance("d3", 3, "d")) == ""
    assert different_cases(provenance("d5", 5, "d"), provenance("d3", 3, "d")) == ""
    assert "different datasets" in different_cases(once, provenance("e3", 3, "e"))
    assert "different datasets" in different_cases(provenance("d3", 3, "d"), provenance("e3", 3))
    unnamed = different_cases(provenance("d5", 5, "d"), provenance("d3", 3))
    assert "(5 and 3)" in unnamed
    assert "does not name the dataset it repeated" in unnamed
