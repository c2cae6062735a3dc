"""A value above the cap an interval was told bounds every value (costs per case).

Apart from the interval so the gate can name the error without loading NumPy.
"""

from __future__ import annotations


class CapExceededError(ValueError):
    """A value is above the cap the interval was told no value exceeds."""

    def __init__(self, index: int, value: float, cap: float) -> None:
        super().__init__(f"value {value!r} of case {index} is above the stated cap {cap!r}")
        self.index = index
        self.value = value
        self.cap = cap
