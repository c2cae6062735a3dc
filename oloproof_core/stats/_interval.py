"""A closed confidence interval ``[lower, upper]``."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Interval"]


@dataclass(frozen=True, slots=True)
class Interval:
    """Closed interval ``[lower, upper]`` on the real line.

    Both ends are stored as plain Python ``float``: results are printed,
    serialised to JSON and compared across processes, and a ``numpy.float64``
    would print as ``np.float64(...)`` under NumPy 2 (NEP 51).
    """

    lower: float
    upper: float

    def __post_init__(self) -> None:
        lower = float(self.lower)
        upper = float(self.upper)
        if math.isnan(lower) or math.isnan(upper):
            raise ValueError(f"interval ends must be numbers, got lower={lower} upper={upper}")
        if lower > upper:
            raise ValueError(f"interval lower={lower} is above upper={upper}")
        # Frozen dataclasses forbid ordinary assignment; the coercion must
        # still happen so callers may pass numpy scalars.
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)

    def __str__(self) -> str:
        return f"lower={self.lower!r} upper={self.upper!r}"

    @property
    def width(self) -> float:
        """Length ``upper - lower``."""
        return self.upper - self.lower

    def contains(self, x: float) -> bool:
        """Whether ``lower <= x <= upper`` (closed at both ends)."""
        return self.lower <= x <= self.upper
