"""Result of comparing two runs of the same cases (candidate ``b`` against baseline ``a``)."""

from __future__ import annotations

from dataclasses import dataclass

from ._interval import Interval

__all__ = ["PairedDifference"]


@dataclass(frozen=True, slots=True)
class PairedDifference:
    """Paired comparison of run ``b`` (candidate) against run ``a`` (baseline).

    ``difference`` is ``estimate_b - estimate_a`` over the complete pairs
    (both runs observed); all three are ``None`` when no pair is complete.
    ``interval`` bounds the difference with every incomplete pair set to its
    worst and best case, so it is never narrower because of missing data.
    ``n_pairs`` counts complete pairs, ``n_missing`` pairs with at least one
    side missing. For pass/fail, ``n_improved`` counts complete pairs that
    fail in ``a`` and pass in ``b``, ``n_regressed`` the reverse (the
    discordant pairs); both are ``None`` for scores.
    """

    estimate_a: float | None
    estimate_b: float | None
    difference: float | None
    interval: Interval
    p_value: float
    n_pairs: int
    n_missing: int
    method: str
    confidence: float
    n_improved: int | None = None
    n_regressed: int | None = None

    def __str__(self) -> str:
        shown = "None" if self.difference is None else repr(self.difference)
        return (
            f"difference={shown} {self.interval} p_value={self.p_value!r} "
            f"n_pairs={self.n_pairs} n_missing={self.n_missing}"
        )
