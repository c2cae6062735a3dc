"""The simulated releases: cases that always pass, always fail, or pass by chance.

A release's cases are drawn from one population: a share of stable cases (always
pass or always fail) and a share of flaky ones, whose chance of passing on any one
try is drawn per case from a Beta distribution. The true figures are the
population's: the mean chance of passing, and the chances that at least one, or
every one, of k tries passes, in closed form from the Beta's moments.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Population:
    """Cases: `always_pass` and `always_fail` shares, the rest flaky with p ~ Beta(a, b)."""

    name: str
    always_pass: float
    always_fail: float
    a: float
    b: float

    @property
    def flaky(self) -> float:
        return 1.0 - self.always_pass - self.always_fail

    def pass_rate(self) -> float:
        """The chance that one try of a case drawn from the population passes."""
        return self.always_pass + self.flaky * self.a / (self.a + self.b)

    def pass_at_k(self, k: int) -> float:
        """The chance that at least one of k tries passes: 1 - E[(1 - p)^k]."""
        none_pass = _beta_moment(self.b, self.a, k)
        return self.always_pass + self.flaky * (1.0 - none_pass)

    def pass_all_k(self, k: int) -> float:
        """The chance that all k tries pass: E[p^k]."""
        return self.always_pass + self.flaky * _beta_moment(self.a, self.b, k)

    def passes(self, rng: np.random.Generator, releases: int, cases: int, k: int) -> IntArray:
        """How many of its k tries each case passed: one row per release."""
        kind = rng.random((releases, cases))
        p = rng.beta(self.a, self.b, (releases, cases))
        p = np.where(kind < self.always_pass, 1.0, p)
        p = np.where(kind >= 1.0 - self.always_fail, 0.0, p)
        result: IntArray = rng.binomial(k, p).astype(np.int64)
        return result


def _beta_moment(a: float, b: float, k: int) -> float:
    """E[p^k] for p ~ Beta(a, b)."""
    return math.prod((a + i) / (a + b + i) for i in range(k))


POPULATIONS = (
    Population("45 % pass, 25 % fail, 30 % flaky Beta(2,2)", 0.45, 0.25, 2.0, 2.0),
    Population("60 % pass, 10 % fail, 30 % flaky Beta(4,1)", 0.60, 0.10, 4.0, 1.0),
)
