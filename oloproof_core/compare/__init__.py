"""Comparing two runs (releases) on the same cases, paired by case id."""

from oloproof_core.compare._cases import (
    CASE_FILTERS,
    CASE_ORDERS,
    CaseChange,
    CaseChanges,
    MetricChange,
    PairCounts,
)
from oloproof_core.compare._columns import (
    NO_CLUSTER,
    PairedValues,
    ValueColumns,
    paired_columns,
    value_columns,
    values_placed,
)
from oloproof_core.compare._compare_runs import compare_paired_values, compare_runs
from oloproof_core.compare._comparison import Comparison, MetricComparison
from oloproof_core.compare._export import (
    EXPORT_FORMATS,
    CaseContent,
    ContentSource,
    export_format,
    export_lines,
    results_content,
)

__all__ = [
    "CASE_FILTERS",
    "CASE_ORDERS",
    "EXPORT_FORMATS",
    "NO_CLUSTER",
    "CaseChange",
    "CaseChanges",
    "CaseContent",
    "Comparison",
    "ContentSource",
    "MetricChange",
    "MetricComparison",
    "PairCounts",
    "PairedValues",
    "ValueColumns",
    "compare_paired_values",
    "compare_runs",
    "export_format",
    "export_lines",
    "paired_columns",
    "results_content",
    "value_columns",
    "values_placed",
]
