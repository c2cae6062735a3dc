"""Confidence intervals and comparisons for evaluation results.

Pure NumPy/SciPy. Each method lives in its own module, with its source cited
in that module's docstring.
"""

from ._bounded_mean import bounded_mean_interval
from ._clopper_pearson import clopper_pearson
from ._interval import Interval
from ._missing import mean_interval, proportion_interval

__all__ = [
    "Interval",
    "bounded_mean_interval",
    "clopper_pearson",
    "mean_interval",
    "proportion_interval",
]
