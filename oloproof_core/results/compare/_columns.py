"""A run's per-case values as columns, and two runs' columns paired by case id.

A comparison needs, per metric, one number per case on each side, aligned over the
union of the two runs' cases. `value_columns` reads them from a result once (a store
can keep them, since a finished run's verdicts never change); `paired_columns`
aligns two runs' columns. When both runs hold the same cases in the same order, the
usual case for two releases on one dataset, the columns are used as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from oloproof_core.results.compare._column_lists import NO_CLUSTER, column_lists

if TYPE_CHECKING:
    from oloproof_core.results.result import Result
    from oloproof_core.stats import ClusterGroups, ReadOrder

FloatArray = npt.NDArray[np.float64]
CodeArray = npt.NDArray[np.intp]


@dataclass(frozen=True, slots=True)
class ValueColumns:
    """One run's values: `ids` in the run's order, `values[metric]` aligned with them.

    NaN marks a missing value. `cluster_codes[i]` indexes `cluster_labels` for case
    `ids[i]` (`NO_CLUSTER` without one); both are None when no case has a cluster.
    `read_order`, when known (a store keeps it), is `ReadOrder.of(ids)`.
    """

    ids: list[str]
    values: Mapping[str, FloatArray]
    cluster_codes: CodeArray | None = None
    cluster_labels: Sequence[str] | None = None
    read_order: ReadOrder | None = None
    """The betting methods' reading order of `ids` (hashing them is the costly part)."""

    def cluster_of(self) -> dict[str, str]:
        """Case id -> cluster label, for the cases that have one."""
        if self.cluster_codes is None or self.cluster_labels is None:
            return {}
        labels = self.cluster_labels
        return {
            case_id: labels[code]
            for case_id, code in zip(self.ids, self.cluster_codes.tolist(), strict=True)
            if code != NO_CLUSTER
        }


def value_columns(result: Result) -> ValueColumns:
    """Every metric of `result` as a column over its cases, with the cases' clusters."""
    lists = column_lists(result)
    values = {name: np.array(numbers, np.float64) for name, numbers in lists.values.items()}
    if lists.cluster_codes is None:
        return ValueColumns(lists.ids, values)
    return ValueColumns(
        lists.ids, values, np.array(lists.cluster_codes, np.intp), lists.cluster_labels
    )


@dataclass(frozen=True, slots=True)
class PairedValues:
    """Two runs' per-case values of each shared metric over the union of their case ids.

    `baseline` and `candidate` give the metrics' estimates and the labels (their
    cases are not read); `ids` is the union in reading order, `baseline_values[m]`
    and `candidate_values[m]` hold metric m's value on each case of `ids` (NaN where
    missing) for every metric both runs have. `clusters`, when cases carry one, is
    the label of each case of `ids`; `cluster_groups`, when given, the same labels
    already coded (`oloproof_core.stats.ClusterGroups`), and `read_order` the
    reading order of `ids`.
    """

    baseline: Result
    candidate: Result
    ids: Sequence[str]
    baseline_ids: Sequence[str]
    candidate_ids: Sequence[str]
    clusters: Sequence[str] | None
    baseline_values: Mapping[str, FloatArray]
    candidate_values: Mapping[str, FloatArray]
    cluster_groups: ClusterGroups | None = field(default=None)
    read_order: ReadOrder | None = field(default=None)


def paired_columns(
    baseline: Result, candidate: Result, before: ValueColumns, after: ValueColumns
) -> PairedValues:
    """`before` (the baseline's columns) and `after` (the candidate's) over their union.

    `baseline` and `candidate` supply the metrics; their cases are not read.
    """
    shared = [
        m.metric for m in candidate.metrics if m.metric in {b.metric for b in baseline.metrics}
    ]
    same_cases = before.ids == after.ids
    if same_cases:
        union = after.ids
        base_values = {name: before.values[name] for name in shared}
        cand_values = {name: after.values[name] for name in shared}
    else:
        union = list(dict.fromkeys([*before.ids, *after.ids]))
        index = {case_id: position for position, case_id in enumerate(union)}
        base_values = {
            name: values_placed(before.ids, before.values[name], index) for name in shared
        }
        cand_values = {name: values_placed(after.ids, after.values[name], index) for name in shared}
    labels, groups = _union_clusters(before, after, union, same_cases)
    return PairedValues(
        baseline=baseline,
        candidate=candidate,
        ids=union,
        baseline_ids=before.ids,
        candidate_ids=after.ids,
        clusters=labels,
        baseline_values=base_values,
        candidate_values=cand_values,
        cluster_groups=groups,
        read_order=after.read_order if same_cases else None,
    )


def _union_clusters(
    before: ValueColumns, after: ValueColumns, union: list[str], same_cases: bool
) -> tuple[list[str] | None, ClusterGroups | None]:
    """Each union case's cluster: the candidate's label, else the baseline's, else its own.

    A case without a cluster in a clustered comparison is a cluster of its own. When
    the candidate labels every case of the same cases, its codes are used as they are.
    """
    if after.cluster_codes is None and before.cluster_codes is None:
        return None, None
    codes, names = after.cluster_codes, after.cluster_labels
    if same_cases and codes is not None and names is not None and (codes >= 0).all():
        from oloproof_core.stats import ClusterGroups

        labels = np.asarray(names, dtype=object)[codes].tolist()
        return labels, ClusterGroups.from_codes(codes, names)
    known = {**before.cluster_of(), **after.cluster_of()}
    return [known.get(case_id) or f"case:{case_id}" for case_id in union], None


def values_placed(ids: Sequence[str], numbers: FloatArray, index: dict[str, int]) -> FloatArray:
    """`numbers[i]` (the value of case `ids[i]`) set at `index[ids[i]]`; every other place NaN."""
    # map() keeps the per-row lookup in C.
    positions = np.fromiter(map(index.get, ids, repeat(-1, len(ids))), np.intp, len(ids))
    known = positions >= 0
    column = np.full(len(index), np.nan)
    column[positions[known]] = numbers[known]
    return column
