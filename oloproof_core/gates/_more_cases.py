"""Sample-size readouts for an undecided rule: how many more cases, and how many for 80 % power.

Two figures, both planning figures rather than promises, kept in the rule's data
(`MoreCases`); what the rule says is `oloproof plan`'s figure (`_readouts`), which
answers the same question once:

- **Projection** ("repeat the sample"): the run is imagined `k` times as large,
  every case repeated `k` times as a new case (clusters as new clusters, missing
  cases as missing cases), so the rate, the spread of the scores and the shares
  of regressed, improved and missing cases all stay exactly those observed; the
  rule's own interval is recomputed for `k = 2, 4, 8, …` and then bisected over
  whole `k`. The readout is `(k − 1) × n` more cases, and a run with that many
  cases behaving like the sample does decide (partial copies of the sample, as an
  earlier version used, change its make-up and gave figures that a real run of
  that size contradicted). Pass/fail rules with nothing missing use the smooth
  exact form instead (`oloproof_core.stats.cases_needed`).
- **Power** (`power_cases`): the total number of cases with which the rule would
  pass with probability 80 % if the truth sat at the observed distance from the
  threshold, or, when the estimate sits on the threshold (where no projection
  decides), at the policy's planning `effect`. Formulas in
  `oloproof_core.stats._power` (exact for pass/fail rates; the betting
  interval's constant otherwise), checked by simulation in bench/README.md.
"""

from __future__ import annotations

from collections.abc import Callable

from oloproof_core.gates._outcome import MoreCases
from oloproof_core.stats import Interval

METHOD = (
    "projection by whole repeats of the sample: the smallest k for which the same "
    "interval over the cases repeated k times stops straddling the threshold; "
    "(k − 1) × n more cases"
)
LIMIT = 200_000


def repeats_needed(
    interval_repeated: Callable[[int], Interval],
    decided: Callable[[Interval], bool],
    n_cases: int,
    *,
    estimate_on_threshold: bool,
    limit: int = LIMIT,
) -> MoreCases:
    """Smallest whole `k ≥ 2` with `decided(interval_repeated(k))`, as `(k − 1) × n` more cases."""
    if estimate_on_threshold:
        return MoreCases(
            None,
            METHOD,
            "the estimate sits on the threshold; repeating the sample never decides it",
        )
    if n_cases == 0:
        return MoreCases(None, METHOD, "nothing was observed, so there is no sample to repeat")
    most = max(2, limit // n_cases)
    high = 2
    while not decided(interval_repeated(high)):
        if high >= most:
            return MoreCases(None, METHOD, f"more than {limit:,} cases at the observed rate")
        high = min(most, high * 2)
    low = max(1, high // 2)
    while high - low > 1:
        middle = (low + high) // 2
        if decided(interval_repeated(middle)):
            high = middle
        else:
            low = middle
    return MoreCases((high - 1) * n_cases, METHOD)
