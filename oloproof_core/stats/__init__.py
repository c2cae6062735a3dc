"""Confidence intervals and comparisons for evaluation results.

Pure NumPy/SciPy. Each method lives in its own module, with its source cited
in that module's docstring:

- pass/fail rates: exact Clopper–Pearson (``clopper_pearson``);
- bounded scores: Waudby-Smith–Ramdas betting interval (``bounded_mean_interval``);
- missing cases bounded by their worst and best completions
  (``proportion_interval``, ``mean_interval``);
- two runs on the same cases: paired differences (``paired_proportion_difference``,
  ``paired_mean_difference``), cluster-robust variants (``clustered_*``);
- how many more cases would settle a rule (``cases_needed``).
"""

from ._bounded_mean import betting_p_value, bounded_mean_bounds, bounded_mean_interval
from ._clopper_pearson import clopper_pearson
from ._cluster import clustered_mean_interval, clustered_paired_difference
from ._difference import PairedDifference
from ._interval import Interval
from ._missing import mean_interval, proportion_interval
from ._paired import mcnemar_exact_p_value, paired_mean_difference, paired_proportion_difference
from ._sample_size import MAX_CASES, cases_needed

__all__ = [
    "MAX_CASES",
    "Interval",
    "PairedDifference",
    "betting_p_value",
    "bounded_mean_bounds",
    "bounded_mean_interval",
    "cases_needed",
    "clopper_pearson",
    "clustered_mean_interval",
    "clustered_paired_difference",
    "mcnemar_exact_p_value",
    "mean_interval",
    "paired_mean_difference",
    "paired_proportion_difference",
    "proportion_interval",
]
