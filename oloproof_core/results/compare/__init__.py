"""Comparing two runs (releases) on the same cases, paired by case id.

Each name is imported on first use: a store that keeps a run's value columns
(`column_lists`) loads none of the comparison's NumPy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof_core._util.names_on_first_use import names_on_first_use

if TYPE_CHECKING:
    from oloproof_core.results.compare._cases import (
        CASE_FILTERS,
        CASE_ORDERS,
        CaseChange,
        CaseChanges,
        MetricChange,
    )
    from oloproof_core.results.compare._column_lists import NO_CLUSTER, ColumnLists, column_lists
    from oloproof_core.results.compare._columns import (
        PairedValues,
        ValueColumns,
        paired_columns,
        value_columns,
        values_placed,
    )
    from oloproof_core.results.compare._compare_runs import compare_paired_values, compare_runs
    from oloproof_core.results.compare._comparison import Comparison
    from oloproof_core.results.compare._export import (
        EXPORT_FORMATS,
        CaseContent,
        ContentSource,
        export_format,
        export_lines,
        results_content,
    )
    from oloproof_core.results.compare._figures import MetricComparison, PairCounts
    from oloproof_core.results.compare._outputs import outputs_changed
    from oloproof_core.results.compare._render import counts_text
    from oloproof_core.results.compare._repeat_cases import REPEAT_FILTERS, RepeatCases, case_of
    from oloproof_core.results.compare._repeat_evidence import RepeatCase, RepeatEvidence
    from oloproof_core.results.compare._repeat_render import repeat_case_lines
    from oloproof_core.results.compare._side_by_side import (
        MAX_RUNS,
        SideBySide,
        check_side_by_side,
        compare_side_by_side,
        side_by_side_problem,
    )
    from oloproof_core.results.compare._transcript_steps import (
        StepDifference,
        difference_lines,
        first_difference,
        step_line,
    )

_EXPORTS: dict[str, str] = {
    "CASE_FILTERS": "._cases",
    "CASE_ORDERS": "._cases",
    "CaseChange": "._cases",
    "CaseChanges": "._cases",
    "MetricChange": "._cases",
    "PairCounts": "._figures",
    "column_lists": "._column_lists",
    "ColumnLists": "._column_lists",
    "NO_CLUSTER": "._column_lists",
    "paired_columns": "._columns",
    "PairedValues": "._columns",
    "value_columns": "._columns",
    "ValueColumns": "._columns",
    "values_placed": "._columns",
    "compare_paired_values": "._compare_runs",
    "compare_runs": "._compare_runs",
    "Comparison": "._comparison",
    "MetricComparison": "._figures",
    "CaseContent": "._export",
    "ContentSource": "._export",
    "export_format": "._export",
    "EXPORT_FORMATS": "._export",
    "export_lines": "._export",
    "results_content": "._export",
    "outputs_changed": "._outputs",
    "MAX_RUNS": "._side_by_side",
    "SideBySide": "._side_by_side",
    "check_side_by_side": "._side_by_side",
    "compare_side_by_side": "._side_by_side",
    "counts_text": "._render",
    "REPEAT_FILTERS": "._repeat_cases",
    "RepeatCases": "._repeat_cases",
    "case_of": "._repeat_cases",
    "repeat_case_lines": "._repeat_render",
    "RepeatCase": "._repeat_evidence",
    "RepeatEvidence": "._repeat_evidence",
    "side_by_side_problem": "._side_by_side",
    "StepDifference": "._transcript_steps",
    "difference_lines": "._transcript_steps",
    "first_difference": "._transcript_steps",
    "step_line": "._transcript_steps",
}

__all__ = [
    "CASE_FILTERS",
    "CASE_ORDERS",
    "EXPORT_FORMATS",
    "MAX_RUNS",
    "NO_CLUSTER",
    "REPEAT_FILTERS",
    "CaseChange",
    "CaseChanges",
    "CaseContent",
    "ColumnLists",
    "Comparison",
    "ContentSource",
    "MetricChange",
    "MetricComparison",
    "PairCounts",
    "PairedValues",
    "RepeatCase",
    "RepeatCases",
    "RepeatEvidence",
    "SideBySide",
    "StepDifference",
    "ValueColumns",
    "case_of",
    "check_side_by_side",
    "column_lists",
    "compare_paired_values",
    "compare_runs",
    "compare_side_by_side",
    "counts_text",
    "difference_lines",
    "export_format",
    "export_lines",
    "first_difference",
    "outputs_changed",
    "paired_columns",
    "repeat_case_lines",
    "results_content",
    "side_by_side_problem",
    "step_line",
    "value_columns",
    "values_placed",
]

__getattr__ = names_on_first_use(__name__, _EXPORTS, globals())
