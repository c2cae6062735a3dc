"""Simulated runs for the labels bench: each case's truth, a judge's verdict, the queue's draws.

A simulated run has N cases, each with a truth (what people would say) drawn from a
population, and a judge's verdict that errs in a stated way. The review queue's
draws are made here with NumPy for speed, by the same mapping as
`oloproof_core.labels.draw_cases`: a uniform number times the sum of the
probabilities, placed among their running sums (`bisect_right`, i.e. NumPy's
`searchsorted(..., side="right")`), the last case if it falls past the end. Only the
uniform numbers differ (NumPy's generator instead of the queue's digest of seed and
position), and `cross_check` runs a few simulated runs through the labels layer
itself (string case ids, `draw_cases`, `labelled_estimate`) with the queue's own
uniform numbers and asserts the same cases and the same interval.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from oloproof_core.labels import draw_cases, labelled_estimate, sampling_probabilities
from oloproof_core.labels._labelled import tuning_for
from oloproof_core.stats import Interval, prediction_powered_interval

Array = npt.NDArray[np.float64]
Judge = Callable[[Array, np.random.Generator], Array]

CASES = 10_000
LABELS = (50, 200, 1_000)
CONFIDENCE = 0.95
SCORE_SHAPE = (4.0, 2.0)
"""Truth of a score metric: Beta(4, 2), mean 2/3 (quality scores skewed high)."""


def flipping(false_pass: float, false_fail: float) -> Judge:
    """A pass/fail judge that passes a failing case with `false_pass`, fails a passing one
    with `false_fail`."""

    def judge(truth: Array, rng: np.random.Generator) -> Array:
        u = rng.random(truth.size)
        passes = np.where(truth > 0.5, u >= false_fail, u < false_pass)
        return passes.astype(np.float64)

    return judge


def coin(truth: Array, rng: np.random.Generator) -> Array:
    """Pure noise: a verdict independent of the truth, pass with probability 1/2."""
    return (rng.random(truth.size) < 0.5).astype(np.float64)


def shifted(bias: float, sd: float) -> Judge:
    """A score judge: truth + bias + normal noise, clipped to [0, 1]."""

    def judge(truth: Array, rng: np.random.Generator) -> Array:
        return np.clip(truth + bias + rng.normal(0.0, sd, truth.size), 0.0, 1.0)

    return judge


def uniform_noise(truth: Array, rng: np.random.Generator) -> Array:
    """Pure noise: a score independent of the truth, uniform on [0, 1]."""
    return rng.random(truth.size)


def unsure_in_the_middle(truth: Array, rng: np.random.Generator) -> Array:
    """Unbiased, but noisier where the truth is middling (sd 0.02 at the ends, 0.22 at 1/2):
    the cases the queue's weighted design favours."""
    sd = 0.02 + 0.2 * 4.0 * truth * (1.0 - truth)
    return np.clip(truth + rng.normal(0.0, 1.0, truth.size) * sd, 0.0, 1.0)


PASS_FAIL_JUDGES: dict[str, Judge] = {
    "unbiased (false pass 5 %, false fail 5 %)": flipping(0.05, 0.05),
    "biased (passes 10 % of failures, fails 5 % of passes)": flipping(0.10, 0.05),
    "pure noise (a coin)": coin,
}
SCORE_JUDGES: dict[str, Judge] = {
    "unbiased (truth + N(0, 0.1), clipped)": shifted(0.0, 0.1),
    "biased (truth + 0.1 + N(0, 0.1), clipped)": shifted(0.1, 0.1),
    "pure noise (uniform)": uniform_noise,
}
FAVOUR = 0.5
"""The favoured design's share in the bench's comparison of designs."""

WEIGHTED_JUDGES: dict[str, Judge] = {
    "biased (truth + 0.1 + N(0, 0.1), clipped)": shifted(0.1, 0.1),
    "unsure in the middle (sd 0.02 + 0.8 t (1 - t))": unsure_in_the_middle,
}


def pass_fail_truth(rng: np.random.Generator, rate: float, n: int = CASES) -> Array:
    return (rng.random(n) < rate).astype(np.float64)


def score_truth(rng: np.random.Generator, n: int = CASES) -> Array:
    return rng.beta(*SCORE_SHAPE, n)


def probabilities(
    verdicts: Array | list[float | None], value_type: str, favour: float = 0.0
) -> Array:
    """Each case's drawing probability, from the labels layer itself (the queue's: uniform;
    with `favour`, that share going to the cases the favoured design weighs more)."""
    values = verdicts if isinstance(verdicts, list) else verdicts.tolist()
    chances = sampling_probabilities(values, (0.0, 1.0), value_type=value_type, favour=favour)
    return np.asarray(chances)


def with_missing(verdicts: Array, missing: npt.NDArray[np.bool_]) -> list[float | None]:
    """The verdicts as the labels layer takes them: None for a missing case."""
    return [None if gone else value for value, gone in zip(verdicts.tolist(), missing, strict=True)]


def draw_indices(q: Array, uniforms: Array) -> npt.NDArray[np.int64]:
    """The cases `draw_cases` picks for these uniform numbers (same running sums, same rule)."""
    cumulative = np.cumsum(q)
    found = np.searchsorted(cumulative, uniforms * cumulative[-1], side="right")
    return np.minimum(found, q.size - 1).astype(np.int64)


def queue_uniforms(seed: str, count: int) -> Array:
    """The queue's own uniform numbers for positions 0..count-1 (as in `draw_cases`)."""
    return np.array(
        [
            int.from_bytes(hashlib.sha256(f"{seed}:{p}".encode()).digest()[:8], "big") / 2.0**64
            for p in range(count)
        ]
    )


@dataclass(frozen=True)
class Drawn:
    """A run's first labelled draws as the combined interval reads them."""

    observed: npt.NDArray[np.int64]
    """Index, among the observed cases, of each used draw's case (draw order)."""
    truth: Array
    """The people's value of each used draw."""


def used_draws(index: npt.NDArray[np.int64], truth: Array, missing: npt.NDArray[np.bool_]) -> Drawn:
    """Draws in order, passing over those on missing cases (as `labelled_estimate` does)."""
    kept = index[~missing[index]]
    position = np.cumsum(~missing) - 1
    return Drawn(position[kept].astype(np.int64), truth[kept])


def combined(
    verdicts: Array, q: Array, drawn: Drawn, missing: npt.NDArray[np.bool_], value_type: str
) -> Interval:
    """The combined (prediction-powered) interval over all N cases, missing ones bounded,
    with the bets and members the labels layer picks for the metric's kind."""
    observed = ~missing
    return prediction_powered_interval(
        verdicts[observed],
        q[observed],
        drawn.observed,
        drawn.truth,
        int(missing.sum()),
        CONFIDENCE,
        tuning=tuning_for(value_type),
        exact_labels=value_type == "pass_fail",
    ).interval


def _through_labels_layer(
    verdicts: Array, truth: Array, missing: npt.NDArray[np.bool_], value_type: str, seed: str
) -> tuple[Interval, Interval, bool]:
    """One run's interval both ways: (labels layer, fast path, same cases drawn)."""
    ids = [f"case-{i:05d}" for i in range(verdicts.size)]
    values = with_missing(verdicts, missing)
    # Scores through the favoured design, so its weights are checked too.
    q = probabilities(values, value_type, FAVOUR if value_type == "score" else 0.0)
    draws = draw_cases(ids, q.tolist(), seed=seed, start=0, count=LABELS[1])
    estimate = labelled_estimate(
        case_ids=ids,
        judge_values=values,
        probabilities=dict(zip(ids, q.tolist(), strict=True)),
        draws=draws,
        # People's labels of the drawn cases only: with every case labelled the figure
        # would be known, not estimated, and the interval not the one checked here.
        truth={draw.case_id: float(truth[ids.index(draw.case_id)]) for draw in draws},
        score_range=(0.0, 1.0),
        confidence=CONFIDENCE,
        value_type=value_type,
    )
    assert estimate is not None
    index = draw_indices(q, queue_uniforms(seed, LABELS[1]))
    same = [ids[i] for i in index] == [draw.case_id for draw in draws]
    fast = combined(verdicts, q, used_draws(index, truth, missing), missing, value_type)
    return estimate.interval, fast, same


def cross_check(seed: int = 7) -> int:
    """Runs through the labels layer and the fast path agree; returns how many were checked."""
    rng = np.random.default_rng(seed)
    worlds: list[tuple[Array, Array, npt.NDArray[np.bool_], str]] = []
    for _ in range(2):
        truth = pass_fail_truth(rng, 0.8)
        verdicts = flipping(0.10, 0.05)(truth, rng)
        worlds.append((verdicts, truth, np.zeros(CASES, dtype=bool), "pass_fail"))
        worlds.append((verdicts, truth, rng.random(CASES) < 0.03, "pass_fail"))
        scores = score_truth(rng)
        judged = unsure_in_the_middle(scores, rng)
        worlds.append((judged, scores, np.zeros(CASES, dtype=bool), "score"))
    for k, (verdicts, truth, missing, value_type) in enumerate(worlds):
        layer, fast, same = _through_labels_layer(verdicts, truth, missing, value_type, f"x{k}")
        apart = max(abs(layer.lower - fast.lower), abs(layer.upper - fast.upper))
        if not same or apart > 1e-12:
            raise AssertionError(f"run {k}: labels layer {layer} / fast path {fast}, same={same}")
    return len(worlds)
