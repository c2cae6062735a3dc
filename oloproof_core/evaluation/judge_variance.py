"""How much of a judged score's spread comes from the system, and how much from the judge.

With repeats (k outputs per case) and judge repeats (j verdicts per output), each
value is `y[c, r, a]` for case c, repeat r and asking a. A two-level nested
(hierarchical) model, `y = mu_c + s_cr + e_cra`, has two variances inside a case: the
system's, `var(s)` (its outputs differ from one repeat to the next), and the judge's,
`var(e)` (its verdicts on one output differ from one asking to the next). They are
estimated by the method of moments of the nested analysis of variance (Searle, Casella
& McCulloch 1992, "Variance Components", §3.6; Snedecor & Cochran 1989, §13.6):

- judge variance: the pooled variance of each output's verdicts around that output's
  mean (sum of squares over sum of degrees of freedom, outputs with 2 verdicts or more);
- system variance: the mean over cases of the variance of the case's output means
  across its repeats (cases with 2 outputs or more), which also holds the judge's
  variance divided by the verdicts per output, so that share is taken off (the mean
  over outputs of judge variance / verdicts); a negative result is set to 0.

The shares are of their sum, the spread of one output judged once around its case's
mean. Without repeats (k = 1) the system's share cannot be told apart and is None.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from oloproof_core.evaluation.repeats import case_id_of

METHOD = (
    "two-level nested variance components, method of moments: judge variance pooled "
    "within each output's judge repeats; system variance from the spread of output means "
    "across a case's repeats, less the judge's share, at least 0"
)


def judge_repeat_figures(
    asked: Mapping[str, Mapping[str, Sequence[float | None]]], judge_repeats: int, repeats: int
) -> dict[str, Any]:
    """What `provenance["judge_repeats"]` keeps: each repeated judge's variance split."""
    metrics = [
        {"metric": criterion, **variance_split(values, repeats)}
        for criterion, values in asked.items()
    ]
    return {
        "judge_repeats": judge_repeats,
        "repeats": repeats,
        "method": METHOD,
        "metrics": metrics,
    }


def variance_split(
    values: Mapping[str, Sequence[float | None]], repeats: int
) -> dict[str, float | int | None]:
    """Judge and system variance and their shares, from each output's askings."""
    outputs: dict[str, list[list[float]]] = {}
    for output_id, asked in values.items():
        given = [value for value in asked if value is not None]
        if given:
            outputs.setdefault(case_id_of(output_id) if repeats > 1 else output_id, []).append(
                given
            )
    judge = _within_outputs([given for case in outputs.values() for given in case])
    system = _between_outputs(list(outputs.values()), judge) if repeats > 1 else None
    return {
        "judge_variance": _rounded(judge),
        "system_variance": _rounded(system),
        **_shares(judge, system),
        "outputs": sum(len(case) for case in outputs.values()),
        "cases": len(outputs),
    }


def _shares(judge: float | None, system: float | None) -> dict[str, float | None]:
    if judge is None or system is None or judge + system <= 0:
        return {"judge_share": None, "system_share": None}
    total = judge + system
    return {"judge_share": _rounded(judge / total), "system_share": _rounded(system / total)}


def _within_outputs(outputs: Sequence[Sequence[float]]) -> float | None:
    squares = 0.0
    freedom = 0
    for given in outputs:
        if len(given) > 1:
            mean = math.fsum(given) / len(given)
            squares += math.fsum((value - mean) ** 2 for value in given)
            freedom += len(given) - 1
    return squares / freedom if freedom else None


def _between_outputs(
    cases: Sequence[Sequence[Sequence[float]]], judge: float | None
) -> float | None:
    spreads: list[float] = []
    judge_parts: list[float] = []
    for outputs in cases:
        if len(outputs) < 2:
            continue
        means = [math.fsum(given) / len(given) for given in outputs]
        centre = math.fsum(means) / len(means)
        spreads.append(math.fsum((mean - centre) ** 2 for mean in means) / (len(means) - 1))
        judge_parts.extend(1.0 / len(given) for given in outputs)
    if not spreads:
        return None
    # The judge's variance reaches the output means divided by the verdicts behind each.
    judge_in_means = 0.0 if judge is None else judge * math.fsum(judge_parts) / len(judge_parts)
    return max(0.0, math.fsum(spreads) / len(spreads) - judge_in_means)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
