"""Several runs of one dataset side by side, each paired with one baseline.

Each candidate is compared with the baseline by `compare_runs` (or the platform's
cached `compare_paired_values`): the side-by-side adds no statistics of its own, only
the grouping, the limit on how many runs a reader can follow, and one shape for the
dashboard, the REST API and `oloproof compare A B C ...`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oloproof_core.errors import ConfigError
from oloproof_core.results.compare._render import _notes, _row, _table, counts_text

if TYPE_CHECKING:
    from oloproof_core.results.compare._comparison import Comparison
    from oloproof_core.results.compare._figures import MetricComparison
    from oloproof_core.results.result import Result

MAX_RUNS = 8
"""The most runs (baseline included) compared at once: past eight columns a reader
stops comparing and starts scrolling."""


def side_by_side_problem(n_runs: int) -> str:
    """Why `n_runs` runs (baseline included) cannot be compared side by side, or ""."""
    if n_runs < 2:
        return "name at least two runs to compare (a baseline and a candidate)"
    if n_runs > MAX_RUNS:
        return (
            f"compare at most {MAX_RUNS} runs at once (a baseline and up to "
            f"{MAX_RUNS - 1} others), got {n_runs}"
        )
    return ""


def check_side_by_side(n_runs: int) -> None:
    problem = side_by_side_problem(n_runs)
    if problem:
        raise ConfigError(problem)


@dataclass(frozen=True, slots=True)
class SideBySide:
    """Each candidate's paired comparison with the same baseline, in the order named."""

    baseline: str
    comparisons: tuple[Comparison, ...]

    @property
    def metric_names(self) -> list[str]:
        """Every metric compared in any pair, in the order first seen."""
        names: dict[str, None] = {}
        for comparison in self.comparisons:
            names.update(dict.fromkeys(item.metric for item in comparison.metrics))
        return list(names)

    def rows(self) -> list[tuple[int, Comparison, MetricComparison]]:
        """(pair's position, pair, metric) for every metric of every pair, metric by
        metric, so each metric's pairs stand one under the other."""
        return [
            (position, comparison, comparison.metric(name))
            for name in self.metric_names
            for position, comparison in enumerate(self.comparisons)
            if comparison.has_metric(name)
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "candidates": [comparison.candidate for comparison in self.comparisons],
            "metrics": self.metric_names,
            "pairs": [comparison.to_dict() for comparison in self.comparisons],
        }

    def __str__(self) -> str:
        return render_side_by_side(self)


def compare_side_by_side(
    baseline: Result,
    candidates: Sequence[Result],
    confidence: float = 0.95,
    *,
    fdr: bool = True,
) -> SideBySide:
    """Compare each of `candidates` with `baseline` on the same cases (`compare_runs`).

    At most `MAX_RUNS` runs in all. Each pair's q-values are over its own metrics, as
    when the pair is compared alone, so a pair's figures do not change with the
    company it is shown in.
    """
    from oloproof_core.results.compare._compare_runs import compare_runs, run_label

    check_side_by_side(1 + len(candidates))
    comparisons = tuple(
        compare_runs(baseline, candidate, confidence, fdr=fdr) for candidate in candidates
    )
    return SideBySide(baseline=run_label(baseline), comparisons=comparisons)


def render_side_by_side(side_by_side: SideBySide) -> str:
    """One row per metric and candidate, each against the same baseline, with the counts
    each figure is over; then each pair's notes."""
    first = side_by_side.comparisons[0]
    level = f"{100 * first.confidence:.3g}%"
    header = ["metric", "candidate", "baseline", "candidate value", "difference"]
    header += [f"{level} interval", "p", "q (BH)" if first.fdr else "q (none)", "flag", "over"]
    rows = [header]
    for _, comparison, item in side_by_side.rows():
        cells = _row(item)
        rows.append([item.metric, comparison.candidate, *cells[1:8], counts_text(item)])
    lines = [
        f"{len(side_by_side.comparisons)} runs against {side_by_side.baseline}, "
        "each paired by case id"
    ]
    lines.extend(_table(rows))
    for comparison in side_by_side.comparisons:
        lines.append("")
        lines.append(
            f"{comparison.candidate} vs {comparison.baseline}: {comparison.n_cases} cases "
            f"({comparison.n_common} in both runs)"
        )
        lines.extend(line for line in _notes(comparison) if line)
    return "\n".join(lines)
