"""Sample-size readout: roughly how many more cases would make an undecided rule decide.

Method ("projection at the observed rate"): pretend the next `m` cases behave
exactly like the ones already seen — the same pass rate, the same spread of
scores, the same discordant-pair rates — while the cases already missing stay
missing, recompute the very interval the rule uses, and find the smallest `m`
for which the interval no longer straddles the threshold. The search doubles
`m` until the rule decides and then bisects, so it costs a few dozen interval
evaluations. It is a planning figure, not a promise: the true rate is unknown
and new cases will not repeat the sample exactly. When the estimate sits on
the threshold no number of cases decides the rule, and the readout says so.
"""

from __future__ import annotations

from collections.abc import Callable

from oloproof_core.gates._outcome import MoreCases
from oloproof_core.stats import Interval

METHOD = (
    "projection at the observed rate: the smallest number of extra cases, "
    "behaving like those seen so far, for which the same interval stops "
    "straddling the threshold"
)
LIMIT = 1_000_000


def more_cases_needed(
    interval_with: Callable[[int], Interval],
    decided: Callable[[Interval], bool],
    *,
    estimate_on_threshold: bool,
    limit: int = LIMIT,
) -> MoreCases:
    """Smallest `m` in 1..limit with `decided(interval_with(m))`, searched by doubling.

    `interval_with(m)` is the rule's interval after `m` more cases at the observed
    rate; deciding is assumed to stay true as `m` grows (intervals shrink).
    """
    if estimate_on_threshold:
        return MoreCases(
            None,
            METHOD,
            "the estimate sits on the threshold; at the observed "
            "rate no number of cases decides it",
        )
    high = 1
    while not decided(interval_with(high)):
        if high >= limit:
            return MoreCases(None, METHOD, f"more than {limit:,} cases at the observed rate")
        high = min(limit, high * 2)
    low = high // 2  # undecided (or zero, the current run, which did not decide)
    while high - low > max(1, high // 50):
        middle = (low + high) // 2
        if decided(interval_with(middle)):
            high = middle
        else:
            low = middle
    return MoreCases(high, METHOD)
