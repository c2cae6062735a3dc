"""Comparing two runs (releases) on the same cases, paired by case id."""

from oloproof_core.compare._compare_runs import compare_runs
from oloproof_core.compare._comparison import Comparison, MetricComparison

__all__ = ["Comparison", "MetricComparison", "compare_runs"]
