"""Index-aligned pairs of per-case results, with missing entries, and their extreme completions."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["Pairs", "read_scores", "read_verdicts"]

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


def _check_lengths(a: Sequence[object], b: Sequence[object]) -> None:
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


def read_scores(
    a: Sequence[float | None], b: Sequence[float | None], low: float, high: float
) -> Pairs:
    """Pairs of scores in ``[low, high]`` (``None`` = missing).

    NaN is refused rather than read as missing: it usually comes from a
    scorer bug, and silently bounding it would hide that.
    """
    _check_lengths(a, b)
    lo, hi = float(low), float(high)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"score range must satisfy low < high (finite), got ({low!r}, {high!r})")

    def convert(run: Sequence[float | None], name: str) -> FloatArray:
        out = np.array([math.nan if v is None else float(v) for v in run], dtype=np.float64)
        given = np.array([v is not None for v in run], dtype=bool)
        bad = np.flatnonzero(given & ~((out >= lo) & (out <= hi)))
        if bad.size:
            index = int(bad[0])
            raise ValueError(
                f"{name}[{index}] = {float(out[index])!r} is outside the declared "
                f"range [{lo!r}, {hi!r}]"
            )
        return out

    return Pairs(convert(a, "a"), convert(b, "b"), lo, hi)
