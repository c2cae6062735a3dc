"""People's labels in the engine: draws, the combined interval, calibration, gates."""

from __future__ import annotations

import json
from collections import Counter
from itertools import islice

import numpy as np
import pytest

from oloproof_core.gates import load_policy
from oloproof_core.judging.evaluators import RubricJudge
from oloproof_core.labels import (
    Draw,
    MetricLabels,
    calibrate,
    draw_cases,
    label_key,
    labelled_estimate,
    review_draws,
    sampling_probabilities,
)
from oloproof_core.results.compare import compare_runs
from oloproof_core.results.reading import result_from_dict
from oloproof_core.stats import clopper_pearson, prediction_powered_interval
from tests.support.synthetic_runs import make_run


def biased_run(
    n: int, rng: np.random.Generator, *, false_pass: float = 0.3, false_fail: float = 0.05
) -> tuple[list[str], np.ndarray, np.ndarray]:
    truth = (rng.random(n) < 0.6).astype(float)
    judge = np.where(truth == 1, rng.random(n) >= false_fail, rng.random(n) < false_pass)
    return [f"c{i}" for i in range(n)], truth, judge.astype(float)


def combined(ids, truth, judge, n_labels, seed="s", missing=()):
    values = [None if case in missing else float(v) for case, v in zip(ids, judge, strict=True)]
    q = sampling_probabilities(values, (0.0, 1.0), value_type="pass_fail")
    draws = draw_cases(ids, q, seed=seed, start=0, count=n_labels)
    people = {d.case_id: float(truth[int(d.case_id[1:])]) for d in draws}
    return labelled_estimate(
        case_ids=ids,
        judge_values=values,
        probabilities=dict(zip(ids, q, strict=True)),
        draws=draws,
        truth=people,
        score_range=(0.0, 1.0),
        confidence=0.95,
    )


def test_a_biased_judge_misleads_its_own_interval_but_not_the_combined_one() -> None:
    ids, truth, judge = biased_run(4000, np.random.default_rng(7))
    judge_only = clopper_pearson(int(judge.sum()), len(judge))
    assert not judge_only.contains(float(truth.mean()))  # the judge passes 30 % of failures
    found = combined(ids, truth, judge, 300)
    assert found is not None
    assert found.interval.contains(float(truth.mean()))
    assert found.judge_bias.upper < 0  # people pass fewer than the judge does
    assert found.n_labels == 300
    assert found.next_position is None


def test_the_combined_interval_covers_the_cases_truth_in_repeated_runs() -> None:
    # A valid 95 % interval misses in at most 5 % of runs; failing below 178 of 200
    # covered has probability under 3e-5 for it (binomial tail), so a failure here
    # means the interval is not valid. Seeds are fixed: the outcome is reproducible.
    rng = np.random.default_rng(11)
    covered = 0
    for run in range(200):
        ids, truth, judge = biased_run(1000, rng)
        found = combined(ids, truth, judge, 80, seed=f"run{run}")
        assert found is not None
        covered += found.interval.contains(float(truth.mean()))
    assert covered >= 178


def test_an_informative_judge_gives_a_narrower_interval_than_the_labels_alone() -> None:
    # Nearly always, not always: the interval keeps 30 % of its error rate for the
    # judge's part, and a draw that happens on many of the judge's errors can leave
    # it as wide as the labels alone (bench/README.md, "Labels: an interval that
    # adapts to its judge"). Fixed seeds: 19 of 20 narrower, a third narrower on average.
    rng = np.random.default_rng(3)
    narrower, ratios = 0, []
    for run in range(20):
        ids, truth, judge = biased_run(5000, rng, false_pass=0.05, false_fail=0.05)
        found = combined(ids, truth, judge, 200, seed=f"w{run}")
        assert found is not None
        labelled_truth = [truth[int(d[1:])] for d in _drawn(ids, judge, 200, f"w{run}")]
        alone = clopper_pearson(int(sum(labelled_truth)), len(labelled_truth))
        narrower += found.interval.width < alone.width
        ratios.append(found.interval.width / alone.width)
    assert narrower >= 18
    assert np.mean(ratios) < 0.8


def _drawn(ids, judge, count, seed):
    q = sampling_probabilities([float(v) for v in judge], (0.0, 1.0), value_type="pass_fail")
    return [d.case_id for d in draws_of(ids, q, seed, count)]


def draws_of(ids, q, seed, count):
    return draw_cases(ids, q, seed=seed, start=0, count=count)


def test_missing_cases_are_bounded_not_dropped() -> None:
    ids, truth, judge = biased_run(1000, np.random.default_rng(5))
    whole = combined(ids, truth, judge, 100)
    gone = combined(ids, truth, judge, 100, missing=set(ids[:100]))
    assert whole is not None
    assert gone is not None
    assert gone.n_missing == 100
    # A tenth of the cases may have gone either way: at least 0.1 of width is theirs.
    assert gone.interval.width >= 0.1 + 0.9 * gone.judge_bias.width / 2
    assert gone.interval.contains(float(truth.mean()))
    assert whole.interval.width < gone.interval.width


def test_draws_are_used_up_to_the_first_one_without_a_label() -> None:
    ids = [f"c{i}" for i in range(10)]
    values = [1.0] * 10
    q = [0.1] * 10
    draws = [Draw(0, "c1", 0.1), Draw(1, "c2", 0.1), Draw(2, "c3", 0.1), Draw(3, "c4", 0.1)]
    kwargs = {
        "case_ids": ids,
        "judge_values": values,
        "probabilities": dict(zip(ids, q, strict=True)),
        "score_range": (0.0, 1.0),
        "confidence": 0.95,
    }
    assert labelled_estimate(draws=draws, truth={}, **kwargs) is None  # type: ignore[arg-type]
    found = labelled_estimate(draws=draws, truth={"c1": 1.0, "c2": 0.0, "c4": 1.0}, **kwargs)  # type: ignore[arg-type]
    assert found is not None
    assert found.n_labels == 2
    assert found.next_position == 2
    values[3] = None  # type: ignore[call-overload]
    # c3 is missing in this run: its draw is passed over, and c4's label counts.
    found = labelled_estimate(
        draws=draws, truth={"c1": 1.0, "c2": 0.0, "c4": 1.0}, **{**kwargs, "judge_values": values}
    )  # type: ignore[arg-type]
    assert found is not None
    assert found.n_labels == 3
    assert found.next_position is None


def test_the_queue_draws_uniformly_or_favours_uncertain_and_changed_verdicts_if_asked() -> None:
    values: list[float | None] = [0.5, 0.0, 1.0, None]
    assert sampling_probabilities(values, (0.0, 1.0), value_type="score") == [0.25] * 4
    q = sampling_probabilities(
        values, (0.0, 1.0), value_type="score", baseline_values=[0.5, 0.0, 0.0, 1.0], favour=0.5
    )
    assert sum(q) == pytest.approx(1.0)
    assert min(q) >= 0.5 / 4
    assert q[0] > q[1]
    assert q[2] > q[1]
    ids = ["a", "b", "c", "d"]
    first = draw_cases(ids, q, seed="x", start=0, count=400)
    assert first == draw_cases(ids, q, seed="x", start=0, count=400)
    assert first[100:] == draw_cases(ids, q, seed="x", start=100, count=300)
    assert first != draw_cases(ids, q, seed="y", start=0, count=400)
    counts = {case: sum(d.case_id == case for d in first) for case in ids}
    assert counts["a"] > counts["b"]
    assert all(d.probability == q[ids.index(d.case_id)] for d in first)


def test_the_interval_refuses_a_case_that_can_never_be_drawn_or_a_label_off_the_scale() -> None:
    with pytest.raises(ValueError, match="above 0"):
        prediction_powered_interval([1.0, 0.0], [1.0, 0.0], [0], [1.0], 0)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        prediction_powered_interval([1.0, 0.0], [0.5, 0.5], [0], [2.0], 0)


def test_calibration_counts_agreement_kappa_and_the_judges_two_errors() -> None:
    judge = [1, 1, 1, 1, 0, 0, 1, 0, 1, 1] * 4
    human = [1, 1, 1, 0, 0, 0, 1, 1, 1, 1] * 4
    found = calibrate(judge, human, value_type="pass_fail", score_range=(0, 1), confidence=0.95)
    assert found.n == 40
    assert found.agreement.value == pytest.approx(32 / 40)
    assert found.false_pass_rate.value == pytest.approx(4 / 12)  # people failed 12
    assert found.false_fail_rate.value == pytest.approx(4 / 28)
    p_e = 0.7 * 0.7 + 0.3 * 0.3
    assert found.kappa.value == pytest.approx((0.8 - p_e) / (1 - p_e))
    for name in ("agreement", "kappa", "false_pass_rate", "false_fail_rate"):
        figure = getattr(found, name)
        assert figure.interval.lower <= figure.value <= figure.interval.upper
    assert json.loads(json.dumps(found.to_dict()))["kappa"]["n"] == 40


def test_score_calibration_gives_correlation_and_mean_absolute_difference() -> None:
    rng = np.random.default_rng(1)
    human = rng.random(60)
    judge = np.clip(human + rng.normal(0, 0.1, 60), 0, 1)
    found = calibrate(judge, human, value_type="score", score_range=(0, 1), confidence=0.95)
    assert found.correlation.value > 0.8
    assert found.mean_abs_difference.interval.contains(float(np.abs(judge - human).mean()))


def test_a_gate_reads_the_labelled_interval_and_says_so() -> None:
    ids, truth, judge = biased_run(600, np.random.default_rng(2), false_pass=0.5)
    run = make_run({"quality": [float(v) for v in judge]}, ids=ids)
    run.provenance["evaluators"] = [RubricJudge(criterion="quality", rubric="Polite?").describe()]
    policy = load_policy({"version": 1, "rules": [{"metric": "quality", "min": 0.75}]})
    before = policy.decide(run)
    assert "assumes the judge is right" in before.rules[0].figures["interval_source"]
    q = sampling_probabilities(list(judge), (0.0, 1.0), value_type="pass_fail")
    draws = tuple(draw_cases(ids, q, seed="g", start=0, count=150))
    run.labels["quality"] = MetricLabels(
        criterion="quality",
        sample="g",
        probabilities=dict(zip(ids, q, strict=True)),
        draws=draws,
        truth={d.case_id: float(truth[int(d.case_id[1:])]) for d in draws},
    )
    after = policy.decide(run)
    rule = after.rules[0]
    assert "150" in rule.figures["interval_source"]
    assert "labels" in rule.reason
    assert rule.figures["upper"] == run.labelled("quality").interval.upper  # type: ignore[union-attr]
    again = result_from_dict(json.loads(run.to_json()))
    assert again.labelled("quality") == run.labelled("quality")
    assert "with people's labels (150 labelled draws)" in str(again)


def test_a_label_is_keyed_by_what_was_judged() -> None:
    assert label_key({"q": 1}, "a", "a") == label_key({"q": 1}, "a", "a")
    assert label_key({"q": 1}, "a", "a") != label_key({"q": 1}, "b", "a")


def test_two_runs_labelled_on_one_queue_are_compared_and_gated_with_their_labels() -> None:
    rng = np.random.default_rng(9)
    ids, truth, old_judge = biased_run(800, rng, false_pass=0.2)
    better = np.where(rng.random(800) < 0.3, 1.0, truth)  # the candidate fixes some failures
    new_judge = np.where(better == 1, 1.0, old_judge)
    q = sampling_probabilities(list(old_judge), (0.0, 1.0), value_type="pass_fail")
    draws = tuple(draw_cases(ids, q, seed="pair", start=0, count=200))
    runs = []
    for judged, people in ((old_judge, truth), (new_judge, better)):
        run = make_run({"quality": [float(v) for v in judged]}, ids=ids)
        run.labels["quality"] = MetricLabels(
            criterion="quality",
            sample="pair",
            probabilities=dict(zip(ids, q, strict=True)),
            draws=draws,
            truth={d.case_id: float(people[int(d.case_id[1:])]) for d in draws},
        )
        runs.append(run)
    baseline, candidate = runs
    comparison = compare_runs(baseline, candidate)
    change = comparison.labelled["quality"]
    assert change.interval.contains(float(better.mean() - truth.mean()))
    assert change.interval.lower > 0
    assert "with people's labels (200 labelled draws)" in str(comparison)
    policy = load_policy(
        {"version": 1, "rules": [{"metric": "quality", "no_regression": {"margin": 0.02}}]}
    )
    rule = policy.decide(candidate, baseline=baseline).rules[0]
    assert "200 labelled draws" in rule.figures["interval_source"]
    assert rule.figures["lower"] == change.interval.lower


def labelled_run(n: int, labelled: set[str], *, seed: str = "q", missing: int = 0):
    """n cases, the judge passing the first three quarters and people the first half;
    people's labels on `labelled`; the last `missing` cases failed (no verdict)."""
    ids = [f"c{i:03d}" for i in range(n)]
    judge = [None if i >= n - missing else float(i < 3 * n // 4) for i in range(n)]
    truth = {case: float(int(case[1:]) < n // 2) for case in ids if case in labelled}
    observed = [case for case, value in zip(ids, judge, strict=True) if value is not None]
    draws = []
    for draw in review_draws(observed, seed):
        draws.append(draw)
        if draw.case_id not in truth or len(draws) > 50 * n:
            break
    return labelled_estimate(
        case_ids=ids,
        judge_values=judge,
        probabilities=dict.fromkeys(ids, 1 / n),
        draws=draws,
        truth=truth,
        score_range=(0.0, 1.0),
        confidence=0.95,
    )


def test_a_run_labelled_on_every_case_is_known_exactly_with_nothing_left_to_narrow() -> None:
    ids = [f"c{i:03d}" for i in range(40)]
    found = labelled_run(40, set(ids))
    assert found is not None
    assert found.known
    assert (found.estimate, found.interval.lower, found.interval.upper) == (0.5, 0.5, 0.5)
    assert (found.n_labels, found.cases_left, found.n_missing) == (40, 0, 0)
    assert found.judge_bias.lower == found.judge_bias.upper == -0.25
    assert found.labels_needed(0.1) == 0
    assert found.labels_needed(0.0) == 0
    assert "all 40 cases labelled: known, not estimated" in found.labels_text
    assert found.to_dict()["known"] is True
    # Cases the system failed on stay at their worst and best; no label narrows them.
    failed = labelled_run(40, set(ids[:36]), missing=4)
    assert failed is not None
    assert failed.known
    assert (failed.interval.lower, failed.interval.upper) == (20 / 40, 24 / 40)
    assert failed.labels_needed(0.05) is None


def test_no_readout_asks_for_more_labels_than_cases_are_left() -> None:
    ids = [f"c{i:03d}" for i in range(40)]
    for kept in (30, 35, 39):
        found = labelled_run(40, set(ids[:kept]), seed=f"s{kept}")
        if found is None:
            continue  # the queue's first draw is an unlabelled case
        assert not found.known
        assert found.cases_left == 40 - kept
        for width in (0.3, 0.1, 0.01, 0.001, 0.0):
            needed = found.labels_needed(width)
            assert needed is None or needed <= found.cases_left, (kept, width, needed)
        # The range people's labels allow holds the interval: it closes as cases run out.
        assert found.interval.width <= (40 - kept) / 40 + 1e-12
    # An 800-case run near its threshold: the gate asks for at most the cases left.
    rng = np.random.default_rng(4)
    ids = [f"c{i:03d}" for i in range(800)]
    judge = [float(v) for v in rng.random(800) < 0.8]
    truth = {case: judge[i] for i, case in enumerate(ids) if i % 40}  # 780 labelled
    run = make_run({"quality": judge}, ids=ids)
    run.provenance["evaluators"] = [RubricJudge(criterion="quality", rubric="Polite?").describe()]
    draws = []
    for draw in review_draws(ids, "near"):
        draws.append(draw)
        if draw.case_id not in truth:
            break
    run.labels["quality"] = MetricLabels(
        criterion="quality",
        sample="near",
        probabilities=dict.fromkeys(ids, 1 / 800),
        draws=tuple(draws),
        truth=truth,
    )
    figure = run.labelled("quality")
    assert figure is not None
    threshold = round(figure.estimate + 0.0004, 4)
    policy = load_policy({"version": 1, "rules": [{"metric": "quality", "min": threshold}]})
    rule = policy.decide(run).rules[0]
    assert rule.outcome == "inconclusive"
    note = rule.more_cases.note if rule.more_cases else ""
    assert "(20 cases left to label)" in note, note
    asked = int(note.split("about ")[1].split(" more")[0].replace(",", ""))
    assert 1 <= asked <= 20


def test_the_queue_is_a_pure_function_of_the_seed_and_the_set_of_cases() -> None:
    ids = [f"c{i:02d}" for i in range(30)]
    first = draw_cases(sorted(ids), [1 / 30] * 30, seed="k", start=0, count=300)
    assert list(islice(review_draws(ids, "k"), 300)) == first
    assert list(islice(review_draws(list(reversed(ids)), "k"), 300)) == first
    assert list(islice(review_draws(ids, "k", start=100), 200)) == first[100:]
    assert list(islice(review_draws(ids, "other"), 300)) != first
    counts = Counter(draw.case_id for draw in islice(review_draws(ids, "k"), 30_000))
    assert set(counts) == set(ids)
    assert max(counts.values()) < 1.25 * 1000
    assert min(counts.values()) > 0.75 * 1000
