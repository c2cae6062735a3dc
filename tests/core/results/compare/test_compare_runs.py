"""compare_runs: paired by case id, checked against SciPy and hand-computed references."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats as scipy_stats

from oloproof import compare
from oloproof_core.errors import OloproofError
from oloproof_core.results.compare import compare_runs
from oloproof_core.results.result import Result
from tests.support.synthetic_runs import make_run


def runs(
    base: list[float | None], cand: list[float | None], **kwargs: object
) -> tuple[Result, Result]:
    return (
        make_run({"exact_label": base}, system=("bot", "1"), **kwargs),  # type: ignore[arg-type]
        make_run({"exact_label": cand}, system=("bot", "2"), **kwargs),
    )  # type: ignore[arg-type]


def test_public_name() -> None:
    assert compare is compare_runs


def test_published_table_interval_and_test_agree() -> None:
    # Agresti, Categorical Data Analysis (3rd ed.), Table 11.1: approval of the
    # prime minister in two surveys of the same 1600 people: 794 approve/approve,
    # 150 approve/disapprove, 86 disapprove/approve, 570 disapprove/disapprove.
    base = [1.0] * 794 + [1.0] * 150 + [0.0] * 86 + [0.0] * 570
    cand = [1.0] * 794 + [0.0] * 150 + [1.0] * 86 + [0.0] * 570
    item = compare_runs(*runs(base, cand)).metric("exact_label")
    assert len(item.regressed) == 150
    assert len(item.improved) == 86
    # The p-value is the betting test on the interval's own capital (no longer
    # McNemar's, which could disagree with the interval in one row); it rejects
    # clearly, and more cautiously than the exact McNemar test.
    assert scipy_stats.binomtest(86, 236, 0.5).pvalue < item.p_value < 0.01
    assert item.difference == pytest.approx((880 - 944) / 1600)  # 0.55 − 0.59
    assert item.baseline_estimate == pytest.approx(0.59)
    assert item.candidate_estimate == pytest.approx(0.55)
    assert item.interval.lower < item.difference < item.interval.upper < 0


def test_regressed_improved_and_cases_only_in_one_run() -> None:
    base = make_run({"exact_label": [1.0, 1.0, 0.0, 1.0]}, ids=["a", "b", "c", "d"])
    cand = make_run({"exact_label": [0.0, 1.0, 1.0, 1.0]}, ids=["a", "b", "c", "e"])
    comparison = compare_runs(base, cand)
    item = comparison.metric("exact_label")
    assert item.regressed == ("a",)
    assert item.improved == ("c",)
    assert comparison.only_in_baseline == ("d",)
    assert comparison.only_in_candidate == ("e",)
    assert comparison.n_cases == 5
    assert comparison.n_common == 3
    assert item.n_missing_pairs == 2
    text = str(comparison)
    assert "1 cases only in the baseline run (d)" in text
    assert "exact_label: regressed on a" in text


def test_missing_pairs_are_bounded_not_dropped() -> None:
    complete = compare_runs(*runs([1.0] * 90 + [0.0] * 10, [1.0] * 90 + [0.0] * 10))
    holes = compare_runs(*runs([1.0] * 90 + [0.0] * 10, [1.0] * 85 + [None] * 5 + [0.0] * 10))
    full, bounded = complete.metric("exact_label"), holes.metric("exact_label")
    assert bounded.n_missing_pairs == 5
    # The five missing candidates could all be regressions, never improvements.
    assert bounded.interval.lower < min(-0.05, full.interval.lower - 0.03)
    assert bounded.interval.upper == pytest.approx(full.interval.upper)
    assert bounded.difference == 0.0  # over the 95 complete pairs


def test_scores_use_the_paired_t_free_betting_interval_and_sub_scores() -> None:
    # Fixed seed: deterministic (0 of 400 fresh seeds would have failed).
    rng = np.random.default_rng(3)
    base = rng.uniform(0.3, 0.7, 400)
    cand = np.clip(base + 0.1 + rng.normal(0, 0.02, 400), 0, 1)
    baseline = make_run(
        {"quality": list(base)},
        value_types={"quality": "score"},
        sub_scores={"quality": {"format": list(base)}},
    )
    candidate = make_run(
        {"quality": list(cand)},
        value_types={"quality": "score"},
        sub_scores={"quality": {"format": list(cand)}},
    )
    comparison = compare_runs(baseline, candidate)
    assert [item.metric for item in comparison.metrics] == ["quality", "quality.format"]
    item = comparison.metric("quality")
    assert item.difference == pytest.approx(float(np.mean(cand - base)))
    assert 0.0 < item.interval.lower < item.difference < item.interval.upper < 0.2
    assert item.p_value < 0.001
    assert len(item.improved) == 400


def test_clusters_make_the_interval_cluster_aware_and_say_so() -> None:
    # Fixed seed: deterministic (0 of 400 fresh seeds would have failed).
    rng = np.random.default_rng(5)
    cluster_shift = np.repeat(rng.normal(0, 0.15, 20), 20)  # 20 clusters of 20 cases
    base = np.clip(0.5 + rng.normal(0, 0.05, 400), 0, 1)
    cand = np.clip(base + 0.02 + cluster_shift, 0, 1)
    labels = [f"doc{i // 20}" for i in range(400)]
    plain = compare_runs(
        *[make_run({"q": list(v)}, value_types={"q": "score"}) for v in (base, cand)]
    )
    clustered = compare_runs(
        *[
            make_run({"q": list(v)}, value_types={"q": "score"}, clusters=labels)
            for v in (base, cand)
        ]
    )
    assert plain.n_clusters is None
    assert clustered.n_clusters == 20
    wide, narrow = clustered.metric("q").interval, plain.metric("q").interval
    assert wide.lower <= narrow.lower
    assert wide.upper >= narrow.upper
    assert wide.width > 1.5 * narrow.width
    assert "cluster-aware" in clustered.metric("q").method
    assert "cluster-aware: 20 clusters" in str(clustered)


def test_cluster_robust_standard_error_matches_a_hand_computation() -> None:
    from oloproof_core.stats import clustered_paired_difference

    # Differences 1, 0 | 0, 0, -1 | 1 in clusters A | B | C; mean 1/6.
    a = [0.0, 0.0, 0.0, 1.0, 1.0, 0.0]
    b = [1.0, 0.0, 0.0, 1.0, 0.0, 1.0]
    clusters = ["A", "A", "B", "B", "B", "C"]
    result = clustered_paired_difference(a, b, clusters, confidence=0.95)
    d = np.array(b) - np.array(a)
    sums = [d[:2].sum() - 2 / 6, d[2:5].sum() - 3 / 6, d[5:].sum() - 1 / 6]
    se = np.sqrt(3 / 2 * np.sum(np.square(sums)) / 36)
    half = scipy_stats.t.ppf(0.975, 2) * se
    assert result.interval.upper == pytest.approx(min(1.0, 1 / 6 + half))
    assert result.interval.lower == pytest.approx(max(-1.0, 1 / 6 - half))


def test_to_dict_is_json_and_str_is_a_table() -> None:
    comparison = compare_runs(*runs([1.0, 0.0] * 20, [1.0, 1.0] * 20))
    data = json.loads(json.dumps(comparison.to_dict()))
    assert data["metrics"][0]["improved"][:2] == ["case_0001", "case_0003"]
    assert data["cluster_aware"] is False
    header = str(comparison).splitlines()[1].split()
    assert header[:4] == ["metric", "baseline", "candidate", "difference"]


def test_runs_without_cases_cannot_be_paired() -> None:
    base, cand = runs([1.0] * 5, [1.0] * 5)
    base.cases = []
    with pytest.raises(OloproofError, match="baseline run carries no cases"):
        compare_runs(base, cand)


def test_metrics_in_one_run_only_are_listed() -> None:
    base = make_run({"exact_label": [1.0] * 5})
    cand = make_run({"exact_label": [1.0] * 5, "known_label": [1.0] * 5})
    comparison = compare_runs(base, cand)
    assert comparison.metrics_only_in_candidate == ("known_label",)
    assert not comparison.has_metric("known_label")
    with pytest.raises(KeyError, match="compared metrics: exact_label"):
        comparison.metric("known_label")
