"""Argument checks shared by the interval functions."""

from __future__ import annotations

import math
import operator

__all__ = ["check_confidence", "check_count"]


def check_confidence(confidence: float) -> float:
    """Return ``confidence`` as a float, raising unless ``0 < confidence < 1``."""
    value = float(confidence)
    if math.isnan(value) or not 0.0 < value < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    return value


def check_count(value: int, name: str) -> int:
    """Return ``value`` as a non-negative ``int``, rejecting floats and bools.

    Bools are refused because ``True`` silently meaning ``1`` hides callers
    passing a verdict where a count was expected.
    """
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer count, got {value!r}")
    try:
        count = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer count, got {value!r}") from None
    if count < 0:
        raise ValueError(f"{name} must be >= 0, got {count}")
    return count
