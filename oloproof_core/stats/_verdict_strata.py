"""Pass/fail labels beside a pass/fail judge: an exact interval within the judge's two verdicts.

With uniform draws, every draw that lands on a case the judge passed is a uniform
draw among those cases, and so for the failed ones. The judge's share of passes
``w`` over the observed cases is known exactly, so the mean truth is

    ybar = w a + (1 - w) b,

``a`` and ``b`` the shares people pass among the cases the judge passed and failed.
Given how many draws landed in each verdict (``n1`` and ``n0``), the people's passes
there are two independent binomials, ``X1 ~ Bin(n1, a)`` and ``X0 ~ Bin(n0, b)``.
Post-stratifying on the verdict is the regression of the labels on a two-valued
judge, so it leans on the judge exactly as far as it agrees with people, with no
lean to learn: ``a`` and ``b`` near 1 and 0 make the interval narrow, a coin
(``a = b``) leaves about the labels' own width.

The interval inverts an exact test of ``ybar = m`` (Berger and Boos (1994), "P values
maximized over a confidence set for the nuisance parameter", JASA 89(427)):

- a box for ``(a, b)``, Clopper–Pearson for each at ``NUISANCE_SHARE`` of the error
  rate, holds the truth but for that share;
- the sample points are ordered by the end of their Wald interval, ``T - z S`` for the
  lower end (``T`` the post-stratified estimate, ``S`` its standard error with half a
  pass added to each stratum, ``z`` fixed before any label), and the points at least as
  extreme as the observed one are closed upwards, so the chance of landing there
  grows with ``a`` and with ``b``;
- ``m`` is rejected when that chance, at its largest over the box's part of the line
  ``w a + (1 - w) b = m``, is at most the rest of the tail's error rate. The largest
  is bounded from above cell by cell along the line (each cell by its corner that
  dominates it), so the bound can only over-state it, and it grows with ``m``: the
  end found by bisection has every ``m`` beyond it rejected.

Each end misses only when its box misses or its test errs: at most half the error
rate each, at every number of labels, whatever the judge. A label where two people
split (1/2) counts as a failure for the lower end and as a pass for the upper.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._clopper_pearson import clopper_pearson

__all__ = ["NUISANCE_SHARE", "verdict_strata_bounds"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Box = tuple[tuple[float, float], tuple[float, float]]

NUISANCE_SHARE = 0.1
"""The box's share of the error rate (half of it for each end's box); the tests keep the rest."""

ORDER_Z = 1.96
"""The Wald ends' multiplier that orders the sample points: any fixed number keeps the
test exact; 95 %'s makes the order that of the interval most people would read."""

_CELLS = 32  # cells of the line within the box; finer cells over-state the largest less
_HALVINGS = 20  # bisection steps for each end: its width over a million
_ROUNDING = 1e-12  # added to each bound: sums of probabilities never err low by more
_NEGLIGIBLE = 1e-15  # the chance of the counts left out of a sum, on each side


def verdict_strata_bounds(
    labels: FloatArray, verdicts: FloatArray, judge_pass_share: float, alpha: float
) -> tuple[float, float, float]:
    """The interval's ends for the mean truth on ``[0, 1]``, and its estimate.

    ``labels`` are the draws' people's values (0, 1 or 1/2); ``verdicts`` the judge's
    verdict (0 or 1) on each draw's case; ``judge_pass_share`` the judge's share of
    passes over every observed case. The draws are uniform, with replacement.
    """
    w = judge_pass_share
    if labels.size == 0:
        return 0.0, 1.0, w
    passed = verdicts >= 0.5
    in_passed, in_failed = labels[passed], labels[~passed]
    estimate = _estimate(labels, ((in_passed, w), (in_failed, 1.0 - w)))
    if w in (0.0, 1.0):  # one stratum: the labels alone, exactly
        lower = _exact(_passes(labels, 0.0), labels.size, 1.0 - alpha)[0]
        upper = _exact(_passes(labels, 1.0), labels.size, 1.0 - alpha)[1]
    else:
        lower = _end(_Strata.counted(in_passed, in_failed, w, 0.0), alpha, upper_end=False)
        upper = _end(_Strata.counted(in_passed, in_failed, w, 1.0), alpha, upper_end=True)
    return lower, upper, min(max(estimate, lower), upper)


def _estimate(labels: FloatArray, strata: tuple[tuple[FloatArray, float], ...]) -> float:
    """The post-stratified mean; a stratum no draw reached counts at the labels' mean."""
    pooled = float(labels.mean())
    return sum(
        share * (float(values.mean()) if values.size else pooled) for values, share in strata
    )


def _passes(values: FloatArray, split_counts: float) -> int:
    """Passes, a split label (1/2) counting as ``split_counts`` of one."""
    halves = np.count_nonzero((values > 0.0) & (values < 1.0))
    return int(np.count_nonzero(values >= 1.0) + split_counts * halves)


@dataclass(frozen=True, slots=True)
class _Strata:
    """One end's counts: draws and passes among the cases the judge passed and failed."""

    w: float
    n1: int
    x1: int
    n0: int
    x0: int

    @classmethod
    def counted(
        cls, in_passed: FloatArray, in_failed: FloatArray, w: float, split_counts: float
    ) -> _Strata:
        x1, x0 = _passes(in_passed, split_counts), _passes(in_failed, split_counts)
        return cls(w, in_passed.size, x1, in_failed.size, x0)

    def box(self, alpha: float) -> Box:
        """Clopper–Pearson for ``a`` and for ``b``, each missing at most ``alpha / 2``."""
        return _exact(self.x1, self.n1, 1.0 - alpha / 2.0), _exact(
            self.x0, self.n0, 1.0 - alpha / 2.0
        )

    def mean(self, x1: IntArray | int, x0: IntArray | int) -> FloatArray:
        return self.w * np.divide(x1, max(self.n1, 1)) + (1.0 - self.w) * np.divide(
            x0, max(self.n0, 1)
        )


@dataclass(frozen=True, slots=True)
class _Region:
    """What one end's test sums over: the extreme region (``_extreme_region``), the box
    for ``(a, b)`` and the counts worth summing in it."""

    starts: IntArray
    box: Box
    windows: tuple[_Window, _Window]
    upper_end: bool


def _end(strata: _Strata, alpha: float, *, upper_end: bool) -> float:
    """One end: the last ``m`` rejected on its side, by bisection (the bound grows away
    from the estimate, so every ``m`` beyond a rejected one is rejected too)."""
    box_alpha = alpha * NUISANCE_SHARE / 2.0
    box = strata.box(box_alpha)
    (a_low, a_high), (b_low, b_high) = box
    w = strata.w
    far = w * a_high + (1.0 - w) * b_high if upper_end else w * a_low + (1.0 - w) * b_low
    windows = (_Window(strata.n1, a_low, a_high), _Window(strata.n0, b_low, b_high))
    region = _Region(_extreme_region(strata, upper_end=upper_end), box, windows, upper_end)
    threshold = alpha / 2.0 - box_alpha
    if _largest_chance(strata, region, far) > threshold:
        return far  # nothing the box allows is rejected
    rejected, kept = far, float(strata.mean(strata.x1, strata.x0))
    for _ in range(_HALVINGS):
        middle = (rejected + kept) / 2.0
        if _largest_chance(strata, region, middle) <= threshold:
            rejected = middle
        else:
            kept = middle
    return rejected


def _extreme_region(strata: _Strata, *, upper_end: bool) -> IntArray:
    """Per ``x1``, where the points at least as extreme as the observed one begin.

    For the lower end: the least ``x0`` from which on the points are in the upward
    closure of those whose Wald lower end is at least the observed one's (``n0 + 1``:
    none). For the upper end, mirrored: the largest ``x0`` up to which they are (-1).
    """
    n1, n0 = strata.n1, strata.n0
    x1 = np.arange(n1 + 1, dtype=np.int64)[:, None]
    x0 = np.arange(n0 + 1, dtype=np.int64)[None, :]
    a, b = (x1 + 0.5) / (n1 + 1), (x0 + 0.5) / (n0 + 1)
    w = strata.w
    spread = w * w * a * (1 - a) / max(n1, 1) * (n1 > 0)
    spread = spread + (1 - w) * (1 - w) * b * (1 - b) / max(n0, 1) * (n0 > 0)
    sign = 1.0 if upper_end else -1.0
    ends = strata.mean(x1, x0) + sign * ORDER_Z * np.sqrt(spread)
    observed = ends[strata.x1, strata.x0]
    extreme = ends <= observed + 1e-12 if upper_end else ends >= observed - 1e-12
    if upper_end:  # close downwards: flip, close upwards, flip back
        extreme = extreme[::-1, ::-1]
    closed = np.logical_or.accumulate(np.logical_or.accumulate(extreme, axis=0), axis=1)
    if upper_end:
        closed = closed[::-1, ::-1]
        found = closed.any(axis=1)
        return np.where(found, n0 - np.argmax(closed[:, ::-1], axis=1), -1).astype(np.int64)
    found = closed.any(axis=1)
    return np.where(found, np.argmax(closed, axis=1), n0 + 1).astype(np.int64)


def _largest_chance(strata: _Strata, region: _Region, m: float) -> float:
    """An upper bound on the chance of the extreme region, over the box's part of the
    line ``w a + (1 - w) b = m`` (0 where the line misses the box)."""
    (a_low, a_high), (b_low, b_high) = region.box
    w, upper_end = strata.w, region.upper_end
    start = max(a_low, (m - (1.0 - w) * b_high) / w)
    stop = min(a_high, (m - (1.0 - w) * b_low) / w)
    if start > stop:
        return 0.0
    a = np.linspace(start, stop, _CELLS + 1)
    b = np.clip((m - w * a) / (1.0 - w), 0.0, 1.0)
    # Along the line a grows as b falls; each cell's chance is at most that of the
    # corner with the cell's largest a and b (lower end: the chance grows with both),
    # or its smallest (upper end: it falls with both).
    corner_a, corner_b = (a[:-1], b[1:]) if upper_end else (a[1:], b[:-1])
    first, second = region.windows
    where = region.starts[first.start : first.stop] - second.start
    pmf = second.pmf(corner_b)
    if upper_end:  # P(X0 <= k): cumulative sums, below the window 0
        sums = np.cumsum(pmf, axis=1)
        reached = np.where(where < 0, 0.0, sums[:, np.clip(where, 0, pmf.shape[1] - 1)])
    else:  # P(X0 >= k): sums from the right, above the window 0
        sums = np.cumsum(pmf[:, ::-1], axis=1)[:, ::-1]
        reached = np.where(where >= pmf.shape[1], 0.0, sums[:, np.clip(where, 0, pmf.shape[1] - 1)])
    chance = (first.pmf(corner_a) * reached).sum(axis=1).max()
    return float(chance) + first.left_out + second.left_out + _ROUNDING


class _Window:
    """The counts of ``Bin(n, p)`` worth summing for every ``p`` of ``[low, high]``: those
    outside have a chance below ``_NEGLIGIBLE`` each side (Chernoff's bound), which
    ``left_out`` adds back to every sum."""

    __slots__ = ("left_out", "n", "start", "stop")

    def __init__(self, n: int, low: float, high: float) -> None:
        counts = np.arange(n + 1, dtype=np.float64)
        below = (counts < n * low) & (_chernoff(counts, n, low) < _NEGLIGIBLE)
        above = (counts > n * high) & (_chernoff(counts, n, high) < _NEGLIGIBLE)
        self.n = n
        self.start = int(np.count_nonzero(below))  # both sets are runs at the ends
        self.stop = n + 1 - int(np.count_nonzero(above))
        self.left_out = _NEGLIGIBLE * (below.any() + above.any())

    def pmf(self, p: FloatArray) -> FloatArray:
        return _binomial_pmf(self.n, p, self.start, self.stop)


def _chernoff(counts: FloatArray, n: int, p: float) -> FloatArray:
    """``exp(-n KL(x / n, p))``: bounds ``P(X <= x)`` below the mean, ``P(X >= x)`` above."""
    if n == 0:
        return np.ones_like(counts)
    share = counts / n
    with np.errstate(divide="ignore", invalid="ignore"):
        kept = np.where(share > 0, share * np.log(share / p), 0.0)
        lost = np.where(share < 1, (1 - share) * np.log((1 - share) / (1 - p)), 0.0)
    divergence = np.nan_to_num(kept + lost, nan=np.inf, posinf=np.inf)
    bound: FloatArray = np.exp(-n * divergence)
    return bound


@functools.lru_cache(maxsize=4096)
def _exact(passes: int, n: int, confidence: float) -> tuple[float, float]:
    """Clopper–Pearson's ends; kept, as the same counts come back from run to run."""
    found = clopper_pearson(passes, n, confidence)
    return found.lower, found.upper


@functools.lru_cache(maxsize=64)
def _log_factorials(n: int) -> FloatArray:
    return np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, n + 1, dtype=np.float64)))))


def _binomial_pmf(n: int, p: FloatArray, start: int, stop: int) -> FloatArray:
    """``Bin(n, p)``'s probabilities of ``start..stop - 1``, one row per ``p``."""
    x = np.arange(start, stop, dtype=np.float64)
    logs = _log_factorials(n)
    choose = logs[n] - logs[start:stop] - logs[::-1][start:stop]
    p = p[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        successes = np.where(x > 0, x * np.log(p), 0.0)
        failures = np.where(x < n, (n - x) * np.log1p(-p), 0.0)
    pmf: FloatArray = np.exp(choose + successes + failures)
    return pmf
