"""How well two raters agree: a judge against people, or one person against another.

Pass/fail verdicts:

- raw agreement and the false-pass and false-fail rates are proportions, each
  with its exact Clopper–Pearson interval;
- Cohen's kappa (Cohen (1960), "A coefficient of agreement for nominal scales",
  Educational and Psychological Measurement 20(1), 37–46) is
  ``(p_o - p_e) / (1 - p_e)`` with ``p_e = p_a p_b + (1 - p_a)(1 - p_b)``. Its
  interval is the range of kappa over the box of three exact intervals (for
  ``p_o``, ``p_a``, ``p_b``, each at ``alpha / 3``): valid at every sample size by
  the union bound, and conservative. Kappa rises with ``p_o`` and falls with
  ``p_e``, and ``p_e`` is bilinear in ``(p_a, p_b)``, so the box's corners give
  the ends.

Scores:

- the mean absolute difference on the range's scale, with the betting interval
  (``_bounded_mean``), valid at every sample size;
- Pearson's correlation with Fisher's z interval (Fisher (1921), Metron 1,
  3–32), which is approximate: it assumes roughly normal scores and is reported
  only from 4 pairs on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
import numpy.typing as npt

from ._bounded_mean import bounded_mean_interval
from ._clopper_pearson import clopper_pearson
from ._interval import Interval
from ._validate import check_confidence

__all__ = [
    "AgreementFigure",
    "correlation_figure",
    "kappa_figure",
    "mean_abs_difference_figure",
    "proportion_figure",
]

EXACT = "clopper-pearson exact"
KAPPA_BOX = "kappa over a box of exact intervals (Bonferroni)"
FISHER_Z = "fisher z (approximate)"
BETTING = "betting (Waudby-Smith & Ramdas 2024)"


@dataclass(frozen=True, slots=True)
class AgreementFigure:
    """One agreement figure: its value, its interval and how many pairs it rests on."""

    value: float | None
    interval: Interval | None
    n: int
    method: str

    def to_dict(self) -> dict[str, Any]:
        interval = self.interval
        return {
            "value": self.value,
            "lower": None if interval is None else interval.lower,
            "upper": None if interval is None else interval.upper,
            "n": self.n,
            "method": self.method,
        }


def proportion_figure(hits: int, n: int, confidence: float) -> AgreementFigure:
    """A proportion with its exact interval (no value when nothing was counted)."""
    if n == 0:
        return AgreementFigure(None, None, 0, EXACT)
    return AgreementFigure(hits / n, clopper_pearson(hits, n, confidence), n, EXACT)


def kappa_figure(a: npt.ArrayLike, b: npt.ArrayLike, confidence: float) -> AgreementFigure:
    """Cohen's kappa of two pass/fail raters (values 0 or 1), with a valid interval."""
    first = np.asarray(a, dtype=bool).reshape(-1)
    second = np.asarray(b, dtype=bool).reshape(-1)
    n = int(first.size)
    if n == 0:
        return AgreementFigure(None, None, 0, KAPPA_BOX)
    level = 1.0 - (1.0 - check_confidence(confidence)) / 3.0
    agreed = int(np.count_nonzero(first == second))
    p_o = clopper_pearson(agreed, n, level)
    p_a = clopper_pearson(int(first.sum()), n, level)
    p_b = clopper_pearson(int(second.sum()), n, level)
    chance = [_chance(x, y) for x in (p_a.lower, p_a.upper) for y in (p_b.lower, p_b.upper)]
    value = _kappa(agreed / n, _chance(float(first.mean()), float(second.mean())))
    lower = _kappa(p_o.lower, max(chance))
    upper = _kappa(p_o.upper, min(chance))
    interval = Interval(min(lower, value), max(upper, value))
    return AgreementFigure(value, interval, n, KAPPA_BOX)


def mean_abs_difference_figure(
    a: npt.ArrayLike, b: npt.ArrayLike, low: float, high: float, confidence: float
) -> AgreementFigure:
    """Mean absolute difference of two raters' scores, in the scores' own units."""
    gaps = np.abs(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)).reshape(-1)
    if gaps.size == 0:
        return AgreementFigure(None, None, 0, BETTING)
    span = high - low
    unit = np.clip(gaps / span, 0.0, 1.0)
    found = bounded_mean_interval(unit, confidence)
    interval = Interval(found.lower * span, found.upper * span)
    return AgreementFigure(float(gaps.mean()), interval, int(gaps.size), BETTING)


def correlation_figure(a: npt.ArrayLike, b: npt.ArrayLike, confidence: float) -> AgreementFigure:
    """Pearson's correlation with Fisher's z interval; no value below 4 pairs or without spread."""
    x = np.asarray(a, dtype=np.float64).reshape(-1)
    y = np.asarray(b, dtype=np.float64).reshape(-1)
    n = int(x.size)
    if n < 4 or float(x.std()) == 0.0 or float(y.std()) == 0.0:
        return AgreementFigure(None, None, n, FISHER_Z)
    r = float(np.corrcoef(x, y)[0, 1])
    clipped = max(-0.999999, min(0.999999, r))
    z = NormalDist().inv_cdf(1.0 - (1.0 - check_confidence(confidence)) / 2.0)
    half = z / math.sqrt(n - 3)
    centre = math.atanh(clipped)
    interval = Interval(math.tanh(centre - half), math.tanh(centre + half))
    return AgreementFigure(r, Interval(min(interval.lower, r), max(interval.upper, r)), n, FISHER_Z)


def _chance(p_a: float, p_b: float) -> float:
    return p_a * p_b + (1.0 - p_a) * (1.0 - p_b)


def _kappa(observed: float, chance: float) -> float:
    if chance >= 1.0:
        # Both raters said the same thing every time: agreement beyond chance is undefined;
        # report the bound the data allow.
        return 1.0 if observed >= 1.0 else -1.0
    return max(-1.0, min(1.0, (observed - chance) / (1.0 - chance)))
