"""Comparing two runs case by case: the comparison and what a person reads of it."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from oloproof_core.results.compare._figures import ComparisonFigures

if TYPE_CHECKING:
    from oloproof_core.results.compare._cases import CaseChanges
    from oloproof_core.results.compare._repeat_cases import RepeatCases
    from oloproof_core.results.result import Result


@dataclass(frozen=True, slots=True)
class Comparison(ComparisonFigures):
    """Two runs compared metric by metric, paired by case id (`ComparisonFigures`), with
    its cases one by one, its export and its text."""

    def cases(
        self,
        *,
        show: str = "all",
        metric: str | None = None,
        order: str = "case",
        output_changed: Collection[str] | None = None,
        repeat_status: str = "all",
        alpha: float | None = None,
    ) -> CaseChanges:
        """The cases one by one, filtered (`show`: all, changed, regressed, improved,
        missing, output_changed) and ordered (`order`: case, change — largest drop first —
        or -change). `output_changed`: the ids of the cases whose output differs
        (`outputs_changed(baseline, candidate)`), which the `output_changed` filter needs.
        `repeat_status` keeps only the cases (all their repeats) with that status in
        `repeat_cases(alpha=alpha)`: regressed, improved, flaky, ..."""
        from oloproof_core.results.compare._cases import CaseChanges

        return CaseChanges(
            self, show=show, metric=metric, order=order, output_changed=output_changed,
            repeat_status=repeat_status, alpha=alpha,
        )  # fmt: skip

    def repeat_cases(self, *, alpha: float | None = None, metric: str | None = None) -> RepeatCases:
        """Each case (its repeats put back together) with its status per metric: regressed
        or improved only when the change is beyond its own noise (an exact test per case,
        Tarone–Holm across cases at family-wise level `alpha`, by default 1 − confidence),
        else flaky, changed, stable pass, stable fail, unchanged or missing; with the
        evidence. `filter(status)` keeps one status."""
        from oloproof_core.results.compare._repeat_cases import RepeatCases

        return RepeatCases(self, alpha=alpha, metric=metric)

    def export(
        self,
        destination: str | Path,
        *,
        baseline: Result,
        candidate: Result,
        format: str | None = None,
        show: str = "all",
        metric: str | None = None,
        order: str = "case",
        repeat_status: str = "all",
    ) -> int:
        """Write one row per case (both sides' outputs, each metric's values and change)
        to a .csv or .jsonl file; `baseline` and `candidate` are the compared results.
        Returns the number of rows written."""
        from oloproof_core.results.compare._export import comparison_export

        return comparison_export(
            self, destination, baseline=baseline, candidate=candidate, format=format,
            show=show, metric=metric, order=order, repeat_status=repeat_status,
        )  # fmt: skip

    def __str__(self) -> str:
        from oloproof_core.results.compare._render import render_comparison

        return render_comparison(self)


def ids_only_in(first: Sequence[str], second: Sequence[str]) -> tuple[str, ...]:
    present = set(second)
    return tuple(case_id for case_id in first if case_id not in present)
