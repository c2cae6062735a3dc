import numpy as np
import pytest

from oloproof_core.stats import Interval


def test_str_uses_plain_float_repr():
    interval = Interval(np.float64(0.8842966917779722), np.float64(1.0))
    assert str(interval) == "lower=0.8842966917779722 upper=1.0"
    assert type(interval.lower) is float
    assert type(interval.upper) is float


def test_width_and_contains():
    interval = Interval(0.25, 0.75)
    assert interval.width == 0.5
    assert interval.contains(0.25)
    assert interval.contains(0.75)
    assert not interval.contains(0.76)


def test_rejects_reversed_or_nan():
    with pytest.raises(ValueError, match="above"):
        Interval(0.6, 0.5)
    with pytest.raises(ValueError, match="numbers"):
        Interval(float("nan"), 1.0)


def test_is_frozen():
    interval = Interval(0.0, 1.0)
    with pytest.raises(AttributeError):
        interval.lower = 0.5  # type: ignore[misc]
