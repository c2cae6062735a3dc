"""Coverage and width of the combined interval, labels alone and the judge alone.

Each simulated run draws N = 10,000 cases from a population, a judge's verdict for
each, and the review queue's first 1,000 draws; the first 50, 200 and 1,000 of them
are the labelled ones (the queue is used in order, so n labels are the first n
draws). Three intervals per run:

- combined: `prediction_powered_interval` on all N verdicts and the n labelled draws,
  the engine's figure once people have labelled (`labelled_estimate`);
- labels only: the people's values of the n draws alone. Uniform draws with
  replacement are i.i.d. from the run's N cases, so Clopper–Pearson (pass/fail) or
  the betting interval (scores) on them is exact for the mean over the N cases;
- judge only: today's interval, Clopper–Pearson (pass/fail) or the betting interval
  (scores) on the N verdicts.

Coverage is counted against the run's own mean truth over its N cases (the
combined interval's estimand) and against the population's mean (what a run of
N cases is a sample of). Each coverage comes with its Monte Carlo standard error,
sqrt(c (1 - c) / sims).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable
from functools import partial
from typing import Any

import numpy as np

from oloproof_core.stats import (
    Interval,
    bounded_mean_interval,
    clopper_pearson,
    proportion_interval,
)

from . import _world as w

SEED = 20_240_529
SCORE_MEAN = w.SCORE_SHAPE[0] / sum(w.SCORE_SHAPE)
RATES = (0.5, 0.8)
MISSING_RATE = 0.8
MISSING_CHANCE = (0.05, 0.01)
"""A failing case is missing with probability 0.05, a passing one with 0.01."""


class Records:
    """Each method's intervals over the simulated runs, with each run's mean truth."""

    def __init__(self) -> None:
        self.intervals: dict[Hashable, list[tuple[float, float, float]]] = defaultdict(list)
        self.notes: dict[str, list[float]] = defaultdict(list)

    def add(self, key: Hashable, interval: Interval, run_mean: float) -> None:
        self.intervals[key].append((interval.lower, interval.upper, run_mean))

    def note(self, key: str, value: float) -> None:
        self.notes[key].append(value)

    def mean(self, key: str) -> float:
        return round(float(np.mean(self.notes[key])), 4)

    def stats(self, key: Hashable, population: float) -> dict[str, float]:
        found = np.asarray(self.intervals[key])
        lower, upper, run = found[:, 0], found[:, 1], found[:, 2]
        on_run = float(np.mean((lower <= run) & (run <= upper)))
        on_population = float(np.mean((lower <= population) & (population <= upper)))
        sims = len(found)
        return {
            "coverage_run": round(on_run, 4),
            "se_run": round(float(np.sqrt(on_run * (1 - on_run) / sims)), 4),
            "coverage_population": round(on_population, 4),
            "se_population": round(float(np.sqrt(on_population * (1 - on_population) / sims)), 4),
            "width": round(float(np.mean(upper - lower)), 4),
        }


def _rng(*key: int) -> np.random.Generator:
    return np.random.default_rng([SEED, *key])


NONE_MISSING = np.zeros(w.CASES, dtype=bool)


def _labelled_runs(
    records: Records, truth: w.Array, verdicts: w.Array, q: w.Array, uniforms: w.Array
) -> None:
    """The combined and the labels-only interval of one run at each number of labels."""
    index = w.draw_indices(q, uniforms)
    mean = float(truth.mean())
    pass_fail = bool(np.all((truth == 0.0) | (truth == 1.0)))
    for n in w.LABELS:
        drawn = w.used_draws(index[:n], truth, NONE_MISSING)
        kind = "pass_fail" if pass_fail else "score"
        records.add(("combined", n), w.combined(verdicts, q, drawn, NONE_MISSING, kind), mean)
        alone = (
            clopper_pearson(int(drawn.truth.sum()), n)
            if pass_fail
            else bounded_mean_interval(drawn.truth, w.CONFIDENCE)
        )
        records.add(("labels_only", n), alone, mean)


def _rows(records: Records, population: float, **cell: Any) -> list[dict[str, Any]]:
    return [
        {
            **cell,
            "labels": n,
            "judge_minus_truth": records.mean("judge_minus_truth"),
            "combined": records.stats(("combined", n), population),
            "labels_only": records.stats(("labels_only", n), population),
            "judge_only": records.stats("judge_only", population),
        }
        for n in w.LABELS
    ]


def pass_fail(sims: int) -> list[dict[str, Any]]:
    """Pass/fail metrics: two pass rates × three judges × three numbers of labels."""
    rows: list[dict[str, Any]] = []
    for r, rate in enumerate(RATES):
        for j, (name, judge) in enumerate(w.PASS_FAIL_JUDGES.items()):
            rng, records = _rng(1, r, j), Records()
            # The queue's probabilities, read once from a first draw of the judge's verdicts
            # (uniform whatever they are; drawn as the figures in bench/README.md were).
            q = w.probabilities(judge(w.pass_fail_truth(rng, rate), rng), "pass_fail")
            truth_of = partial(w.pass_fail_truth, rate=rate)
            _simulate(records, rng, sims, truth_of, judge, q, _exact_on_verdicts)
            rows += _rows(records, rate, truth=f"pass rate {rate}", judge=name)
    return rows


def scores(sims: int) -> list[dict[str, Any]]:
    """A score metric (truth Beta(4, 2)): three judges × three numbers of labels."""
    rows: list[dict[str, Any]] = []
    q = np.full(w.CASES, 1.0 / w.CASES)
    for j, (name, judge) in enumerate(w.SCORE_JUDGES.items()):
        rng, records = _rng(2, j), Records()
        _simulate(records, rng, sims, w.score_truth, judge, q, _betting_on_verdicts)
        rows += _rows(records, SCORE_MEAN, truth="scores Beta(4, 2)", judge=name)
    return rows


def _exact_on_verdicts(verdicts: w.Array) -> Interval:
    return clopper_pearson(int(verdicts.sum()), w.CASES)


def _betting_on_verdicts(verdicts: w.Array) -> Interval:
    return bounded_mean_interval(verdicts, w.CONFIDENCE)


def _simulate(
    records: Records,
    rng: np.random.Generator,
    sims: int,
    truth_of: Callable[[np.random.Generator], w.Array],
    judge: w.Judge,
    q: w.Array,
    judge_only: Callable[[w.Array], Interval],
) -> None:
    """`sims` runs: the truth, the judge's verdicts, its own interval and the labelled ones."""
    for _ in range(sims):
        truth = truth_of(rng)
        verdicts = judge(truth, rng)
        mean = float(truth.mean())
        records.note("judge_minus_truth", float(verdicts.mean()) - mean)
        records.add("judge_only", judge_only(verdicts), mean)
        _labelled_runs(records, truth, verdicts, q, rng.random(max(w.LABELS)))


def weighted(sims: int) -> list[dict[str, Any]]:
    """Score judges: the combined interval with uniform draws and with the queue's weights."""
    rows: list[dict[str, Any]] = []
    uniform = np.full(w.CASES, 1.0 / w.CASES)
    for j, (name, judge) in enumerate(w.WEIGHTED_JUDGES.items()):
        rng, records = _rng(3, j), Records()
        for _ in range(sims):
            truth = w.score_truth(rng)
            verdicts = judge(truth, rng)
            mean = float(truth.mean())
            uniforms = rng.random(max(w.LABELS))
            favoured = w.probabilities(verdicts, "score", w.FAVOUR)
            designs = (("uniform", uniform), ("weighted", favoured))
            for design, q in designs:
                index = w.draw_indices(q, uniforms)
                for n in w.LABELS:
                    drawn = w.used_draws(index[:n], truth, NONE_MISSING)
                    found = w.combined(verdicts, q, drawn, NONE_MISSING, "score")
                    records.add((design, n), found, mean)
        for n in w.LABELS:
            rows.append(
                {
                    "truth": "scores Beta(4, 2)",
                    "judge": name,
                    "labels": n,
                    "uniform": records.stats(("uniform", n), SCORE_MEAN),
                    "weighted": records.stats(("weighted", n), SCORE_MEAN),
                }
            )
    return rows


def missing(sims: int) -> list[dict[str, Any]]:
    """Pass rate 0.8, the biased judge, failing cases missing five times as often."""
    rng, records = _rng(4, 0), Records()
    judge = w.PASS_FAIL_JUDGES["biased (passes 10 % of failures, fails 5 % of passes)"]
    for _ in range(sims):
        truth = w.pass_fail_truth(rng, MISSING_RATE)
        verdicts = judge(truth, rng)
        gone = rng.random(w.CASES) < np.where(truth > 0.5, MISSING_CHANCE[1], MISSING_CHANCE[0])
        q = w.probabilities(w.with_missing(verdicts, gone), "pass_fail")
        index = w.draw_indices(q, rng.random(max(w.LABELS)))
        mean = float(truth.mean())
        records.note("missing", float(gone.mean()))
        observed = verdicts[~gone]
        found = proportion_interval(int(observed.sum()), observed.size, int(gone.sum()))
        records.add("judge_only", found, mean)
        for n in w.LABELS:
            drawn = w.used_draws(index[:n], truth, gone)
            records.note(f"used {n}", float(drawn.truth.size))
            records.add(("combined", n), w.combined(verdicts, q, drawn, gone, "pass_fail"), mean)
    return [
        {
            "truth": f"pass rate {MISSING_RATE}",
            "judge": "biased (passes 10 % of failures, fails 5 % of passes)",
            "missing_share": records.mean("missing"),
            "labels": n,
            "labels_used": records.mean(f"used {n}"),
            "combined": records.stats(("combined", n), MISSING_RATE),
            "judge_only": records.stats("judge_only", MISSING_RATE),
        }
        for n in w.LABELS
    ]
