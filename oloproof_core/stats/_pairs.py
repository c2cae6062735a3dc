"""Index-aligned pairs of per-case results, with missing entries, and their extreme completions."""

from __future__ import annotations

import math
from collections.abc import Sequence, Sized
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["Pairs", "pairs_from_arrays", "read_scores", "read_verdicts"]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class Pairs:
    """Two aligned runs on a known range; missing entries hold NaN in ``a``/``b``."""

    a: FloatArray
    b: FloatArray
    low: float
    high: float

    @property
    def a_missing(self) -> BoolArray:
        result: BoolArray = np.isnan(self.a)
        return result

    @property
    def b_missing(self) -> BoolArray:
        result: BoolArray = np.isnan(self.b)
        return result

    @property
    def complete(self) -> BoolArray:
        result: BoolArray = ~(self.a_missing | self.b_missing)
        return result

    @property
    def span(self) -> float:
        """Largest possible ``|b - a|``: differences lie in ``[-span, span]``."""
        return self.high - self.low

    def differences(self, best: bool) -> FloatArray:
        """Per-pair ``b - a`` with missing entries at their worst (or best) value.

        Worst case for the difference: the baseline at the top of the range,
        the candidate at the bottom; best case the reverse.
        """
        a_fill, b_fill = (self.low, self.high) if best else (self.high, self.low)
        a = np.where(self.a_missing, a_fill, self.a)
        b = np.where(self.b_missing, b_fill, self.b)
        result: FloatArray = b - a
        return result

    def unit_differences(self, best: bool) -> FloatArray:
        """:meth:`differences` mapped from ``[-span, span]`` onto ``[0, 1]``."""
        unit = (self.differences(best) + self.span) / (2.0 * self.span)
        # Rounding in the subtraction can step a hair outside [0, 1].
        result: FloatArray = np.clip(unit, 0.0, 1.0)
        return result


def _check_lengths(a: Sized, b: Sized) -> None:
    if len(a) != len(b):
        raise ValueError(f"runs must be index-aligned: a has {len(a)} entries, b has {len(b)}")


def read_verdicts(a: Sequence[bool | None], b: Sequence[bool | None]) -> Pairs:
    """Pairs of pass/fail verdicts (``None`` = missing) as 0/1 scores."""
    _check_lengths(a, b)

    def convert(run: Sequence[bool | None], name: str) -> FloatArray:
        out = np.empty(len(run), dtype=np.float64)
        for i, verdict in enumerate(run):
            if verdict is None:
                out[i] = math.nan
            elif isinstance(verdict, bool | np.bool_):
                out[i] = 1.0 if verdict else 0.0
            else:
                raise TypeError(f"{name}[{i}] must be True, False or None, got {verdict!r}")
        return out

    return Pairs(convert(a, "a"), convert(b, "b"), 0.0, 1.0)


def _checked_range(low: float, high: float) -> tuple[float, float]:
    lo, hi = float(low), float(high)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"score range must satisfy low < high (finite), got ({low!r}, {high!r})")
    return lo, hi


def _check_within(values: FloatArray, given: BoolArray, name: str, lo: float, hi: float) -> None:
    bad = np.flatnonzero(given & ~((values >= lo) & (values <= hi)))
    if bad.size:
        index = int(bad[0])
        raise ValueError(
            f"{name}[{index}] = {float(values[index])!r} is outside the declared "
            f"range [{lo!r}, {hi!r}]"
        )


def pairs_from_arrays(a: FloatArray, b: FloatArray, low: float, high: float) -> Pairs:
    """Pairs from two aligned float arrays in which NaN marks a missing entry.

    For callers that already hold the values as columns (a store, a comparison):
    `read_scores` walks Python lists, which at 100,000 cases costs more than the
    statistics themselves.
    """
    _check_lengths(a, b)
    lo, hi = _checked_range(low, high)
    pair = []
    for run, name in ((a, "a"), (b, "b")):
        values = np.asarray(run, dtype=np.float64)
        _check_within(values, ~np.isnan(values), name, lo, hi)
        pair.append(values)
    return Pairs(pair[0], pair[1], lo, hi)


def read_scores(
    a: Sequence[float | None], b: Sequence[float | None], low: float, high: float
) -> Pairs:
    """Pairs of scores in ``[low, high]`` (``None`` = missing).

    NaN is refused rather than read as missing: it usually comes from a
    scorer bug, and silently bounding it would hide that.
    """
    _check_lengths(a, b)
    lo, hi = _checked_range(low, high)

    def convert(run: Sequence[float | None], name: str) -> FloatArray:
        out = np.array([math.nan if v is None else float(v) for v in run], dtype=np.float64)
        given = np.array([v is not None for v in run], dtype=bool)
        _check_within(out, given, name, lo, hi)
        return out

    return Pairs(convert(a, "a"), convert(b, "b"), lo, hi)
