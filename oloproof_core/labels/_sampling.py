"""Which cases the review queue asks people to label, and with what probability.

Labels only correct the judge if the labelled cases are drawn at random with known
probabilities. Each draw picks one case, with replacement, from a fixed distribution,
recorded with the draw. By default it is uniform: measured against a design that
favours the cases where a label is likely to move the figure (a score the judge put
near the middle of its range, a verdict that differs from the baseline's), uniform
draws gave the narrower interval at 50 to 1,000 labels, even with a judge whose errors
sit where it is unsure (bench/README.md, "Labels and the judge"): the interval's bets
must allow for the largest weight any draw can carry, and favoured designs raise it.
`favour` mixes that design in (a share of the distribution); the uniform rest keeps
every probability at least ``(1 - favour)`` times the uniform one, which bounds every
draw's weight by ``1 / (1 - favour)`` before any label is seen
(``oloproof_core.stats._prediction_powered``).

Draws are a pure function of a seed and their position, so the queue is the same for
everyone and is computed whenever it is read, never stored: `review_draws` is the queue
of a run's cases (uniform over their sorted ids), endless, read as far as it is needed.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate, islice
from itertools import count as positions_from

__all__ = ["Draw", "draw_cases", "review_draws", "sampling_probabilities"]

MAX_FAVOUR = 0.9
UNCERTAINTY_WEIGHT = 2.0
DISAGREEMENT_WEIGHT = 1.0


@dataclass(frozen=True, slots=True)
class Draw:
    """The queue's draw at ``position``: the case it picked and that case's probability."""

    position: int
    case_id: str
    probability: float


def sampling_probabilities(
    judge_values: Sequence[float | None],
    score_range: tuple[float, float],
    *,
    value_type: str,
    baseline_values: Sequence[float | None] | None = None,
    favour: float = 0.0,
) -> list[float]:
    """One drawing probability per case (all above zero, summing to one).

    With `favour` above 0, that share of the distribution goes to cases in proportion to
    their weight (1, plus up to 2 for a score near the middle of the range, plus 1 for a
    verdict that differs from the baseline's; a missing case weighs nothing).
    """
    if not 0.0 <= favour <= MAX_FAVOUR:
        raise ValueError(f"favour must be from 0 to {MAX_FAVOUR}, got {favour!r}")
    n = len(judge_values)
    if n == 0:
        return []
    if favour == 0.0:
        return [1.0 / n] * n
    low, high = score_range
    weights = []
    for index, value in enumerate(judge_values):
        if value is None:  # a missing case cannot be labelled; it keeps its uniform share
            weights.append(0.0)
            continue
        weight = 1.0
        if value_type == "score" and high > low:
            unit = min(1.0, max(0.0, (value - low) / (high - low)))
            weight += UNCERTAINTY_WEIGHT * 4.0 * unit * (1.0 - unit)
        if baseline_values is not None and index < len(baseline_values):
            before = baseline_values[index]
            if before is not None and before != value:
                weight += DISAGREEMENT_WEIGHT
        weights.append(weight)
    total = sum(weights)
    if total == 0.0:
        return [1.0 / n] * n
    return [(1.0 - favour) / n + favour * weight / total for weight in weights]


def draw_cases(
    case_ids: Sequence[str],
    probabilities: Sequence[float],
    *,
    seed: str,
    start: int,
    count: int,
) -> list[Draw]:
    """Draws ``start`` to ``start + count - 1`` of the queue seeded by ``seed``."""
    if count <= 0:
        return []
    return list(islice(_draws(case_ids, probabilities, seed, start), count))


def review_draws(case_ids: Sequence[str], seed: str, *, start: int = 0) -> Iterator[Draw]:
    """The review queue of a run's cases from draw ``start`` on, without end.

    Each draw picks one case, with replacement, uniformly over the sorted case ids: a
    pure function of the seed and the set of cases, so every run on the same cases
    draws the same queue, and every reader computes the same draws.
    """
    ids = sorted(case_ids)
    return _draws(ids, [1.0 / len(ids)] * len(ids) if ids else [], seed, start)


def _draws(
    case_ids: Sequence[str], probabilities: Sequence[float], seed: str, start: int
) -> Iterator[Draw]:
    if len(case_ids) != len(probabilities):
        raise ValueError(f"{len(probabilities)} probabilities for {len(case_ids)} cases")
    if start < 0:
        raise ValueError(f"start must be >= 0, got {start}")
    return _drawn(case_ids, probabilities, seed, start) if case_ids else iter(())


def _drawn(
    case_ids: Sequence[str], probabilities: Sequence[float], seed: str, start: int
) -> Iterator[Draw]:
    cumulative = list(accumulate(probabilities))
    total = cumulative[-1]
    last = len(case_ids) - 1
    for position in positions_from(start):
        point = _uniform(seed, position) * total
        index = min(bisect_right(cumulative, point), last)
        yield Draw(position, case_ids[index], probabilities[index])


def _uniform(seed: str, position: int) -> float:
    """A uniform number in [0, 1) fixed by the seed and the position."""
    digest = hashlib.sha256(f"{seed}:{position}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64
