"""Two runs that repeated each case a different number of times, compared case by case.

Repeat j of one run and repeat j of the other are independent tries of one case, so
pairing them pairs nothing the cases do not; with different counts some repeats have
no partner at all. Each side's repeats of a case are therefore put together as the
case's mean, and the case means are paired: a case's difference of means estimates
the change of its pass rate (or mean score) without bias, and cases are independent
of each other, as the paired intervals need. The comparison's rows stay the repeats,
for the case grid and the per-case tests against noise (`_repeat_cases.py`).

A case with a repeat that has no value is missing from that side (bounded at its
worst and best): the mean of the repeats it does have would read a failure that left
no value as if the try had not been made.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from oloproof_core.evaluation.case_weighted import case_clusters
from oloproof_core.results.compare._columns import FloatArray, PairedValues
from oloproof_core.results.compare._comparison import Comparison
from oloproof_core.results.compare._figures import CaseMeans
from oloproof_core.results.compare._repeat_cases import case_of

Compare = Callable[[PairedValues], Comparison]
CASE_MEANS_NOTE = "pairs: each case's mean over each run's own repeats"
PASS_FAIL_MEANS = " (of a pass/fail metric: the share of its repeats that passed)"


def compare_case_means(paired: PairedValues, compare: Compare) -> Comparison:
    """`compare` (the paired comparison of rows) over each case's means, its metrics
    keeping the rows for the grid and the tests against noise."""
    units = case_means(paired)
    compared = compare(units)
    row_clusters = None if paired.clusters is None else tuple(paired.clusters)
    metrics = tuple(
        replace(
            item,
            _baseline=paired.baseline_values[item.metric],
            _candidate=paired.candidate_values[item.metric],
            _ids=tuple(paired.ids),
            _clusters=row_clusters,
            method=f"{item.method}; {CASE_MEANS_NOTE}"
            + (PASS_FAIL_MEANS if item.value_type == "pass_fail" else ""),
            _units=CaseMeans(item._baseline, item._candidate, item._ids, item._clusters),
        )
        for item in compared.metrics
    )
    alone = (
        _only_in(paired.baseline_ids, paired.candidate_ids),
        _only_in(paired.candidate_ids, paired.baseline_ids),
    )
    return replace(compared, metrics=metrics, repeats_only_in=alone)


def case_means(paired: PairedValues) -> PairedValues:
    """`paired` with each side's repeats of a case put together as the case's mean: one
    pair a case, over the cases of either run, clustered only by a dataset's clusters."""
    cases = list(dict.fromkeys(case_of(case_id) for case_id in paired.ids))
    index = {case_id: position for position, case_id in enumerate(cases)}
    codes = np.fromiter((index[case_of(case_id)] for case_id in paired.ids), np.intp)
    sides = []
    for side_ids in (paired.baseline_ids, paired.candidate_ids):
        ran = _ran(paired.ids, side_ids)
        tries = np.bincount(codes[ran], minlength=len(cases))
        sides.append((ran, tries, [cases[i] for i in np.flatnonzero(tries).tolist()]))
    means = [
        {name: _means(values[ran], codes[ran], tries) for name, values in columns.items()}
        for (ran, tries, _), columns in zip(
            sides, (paired.baseline_values, paired.candidate_values), strict=True
        )
    ]
    return PairedValues(
        baseline=paired.baseline,
        candidate=paired.candidate,
        ids=cases,
        baseline_ids=sides[0][2],
        candidate_ids=sides[1][2],
        # Each case its repeats' cluster unless the dataset clusters cases of its own.
        clusters=case_clusters(paired.clusters, cases, codes, "case:"),
        baseline_values=means[0],
        candidate_values=means[1],
    )


def _ran(ids: Sequence[str], side_ids: Sequence[str]) -> np.ndarray:
    if side_ids is ids or list(side_ids) == list(ids):
        return np.ones(len(ids), dtype=bool)
    known = frozenset(side_ids)
    return np.fromiter((case_id in known for case_id in ids), bool, count=len(ids))


def _means(values: FloatArray, codes: np.ndarray, tries: np.ndarray) -> FloatArray:
    """Each case's mean of its tries' values; NaN where it has none or one is NaN."""
    sums = np.bincount(codes, weights=values, minlength=tries.size)
    found: FloatArray = np.full(tries.size, np.nan)
    np.divide(sums, tries, out=found, where=tries > 0)
    return found


def _only_in(ids: Sequence[str], other: Sequence[str]) -> tuple[str, ...]:
    if list(ids) == list(other):
        return ()
    known = frozenset(other)
    return tuple(case_id for case_id in ids if case_id not in known)
