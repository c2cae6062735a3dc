"""The simulated worlds: latency and cost distributions with their true figures.

Latencies are lognormal (the usual shape of service times) or a mixture with a
slow mode, rounded to whole milliseconds so that ties occur as in real logs. Costs
are heavy-tailed (lognormal with σ = 1.5, Pareto with shape 1.5, whose variance is
infinite), each either capped (what a limit on a case's model calls guarantees:
``min(cost, cap)``, whose mean is known in closed form) or not.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats

Array = npt.NDArray[np.float64]
Draw = Callable[[np.random.Generator, tuple[int, int]], Array]

CAP = 0.05
"""The stated most a case can cost, in dollars, in the capped worlds."""


@dataclass(frozen=True)
class Latencies:
    name: str
    draw: Draw
    quantile: Callable[[float], float]


def _lognormal(mu: float, sigma: float) -> Latencies:
    def draw(rng: np.random.Generator, shape: tuple[int, int]) -> Array:
        return np.round(rng.lognormal(mu, sigma, shape))

    def quantile(q: float) -> float:
        # Rounding to whole ms: the smallest whole value with F ≥ q.
        return float(np.round(math.exp(mu + sigma * stats.norm.ppf(q))))

    return Latencies(
        f"lognormal(median {math.exp(mu):.0f} ms, σ={sigma:g}), rounded", draw, quantile
    )


def _slow_mode() -> Latencies:
    """90 % around 400 ms, 10 % around 3 s: a p95 that sits in the slow mode."""

    def draw(rng: np.random.Generator, shape: tuple[int, int]) -> Array:
        slow = rng.random(shape) < 0.1
        fast = rng.lognormal(math.log(400), 0.3, shape)
        mixed: Array = np.where(slow, rng.lognormal(math.log(3000), 0.4, shape), fast)
        return np.round(mixed)

    grid = np.arange(0, 40_000, dtype=np.float64)
    upper = grid + 0.5  # P(round(X) ≤ k) = P(X < k + 0.5)
    cdf = 0.9 * stats.lognorm.cdf(upper, 0.3, scale=400) + 0.1 * stats.lognorm.cdf(
        upper, 0.4, scale=3000
    )

    def quantile(q: float) -> float:
        return float(grid[np.searchsorted(cdf, q)])

    return Latencies(
        "mixture 90 % lognormal(400 ms) + 10 % lognormal(3 s), rounded", draw, quantile
    )


LATENCIES = (_lognormal(math.log(800), 0.6), _lognormal(math.log(300), 1.2), _slow_mode())


@dataclass(frozen=True)
class Costs:
    name: str
    draw: Draw
    mean: float
    capped: bool


def _lognormal_cost(capped: bool) -> Costs:
    mu, sigma = math.log(0.002), 1.5

    def draw(rng: np.random.Generator, shape: tuple[int, int]) -> Array:
        values = rng.lognormal(mu, sigma, shape)
        return np.minimum(values, CAP) if capped else values

    mean = math.exp(mu + sigma**2 / 2)
    if capped:  # E[min(X, c)] = E[X; X < c] + c P(X ≥ c)
        z = (math.log(CAP) - mu) / sigma
        mean = mean * stats.norm.cdf(z - sigma) + CAP * stats.norm.sf(z)
    label = "lognormal(median $0.002, σ=1.5)" + (f" capped at ${CAP:g}" if capped else "")
    return Costs(label, draw, float(mean), capped)


def _pareto_cost(capped: bool) -> Costs:
    scale, shape_a = 0.001, 1.5

    def draw(rng: np.random.Generator, shape: tuple[int, int]) -> Array:
        values = scale * (1.0 + rng.pareto(shape_a, shape))
        return np.minimum(values, CAP) if capped else values

    mean = scale * shape_a / (shape_a - 1.0)
    if capped:  # E[min(X, c)] = x_m + ∫_{x_m}^{c} (x_m / t)^a dt
        mean = scale + scale**shape_a * (CAP ** (1 - shape_a) - scale ** (1 - shape_a)) / (
            1 - shape_a
        )
    label = "Pareto(x_m=$0.001, shape 1.5; infinite variance)" + (
        f" capped at ${CAP:g}" if capped else ""
    )
    return Costs(label, draw, float(mean), capped)


CAPPED_COSTS = (_lognormal_cost(True), _pareto_cost(True))
OPEN_COSTS = (_lognormal_cost(False), _pareto_cost(False))
