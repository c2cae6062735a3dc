"""`plan()`: how many cases a release policy needs for 80 % power at a stated effect."""

from __future__ import annotations

from typing import Any

from oloproof_core import Result
from oloproof_core.gates import CasePlan, load_policy, plan_cases


def plan(
    policy: Any,
    *,
    result: Result | None = None,
    baseline: Result | None = None,
    effect: float | None = None,
    confidence: float | None = None,
    sequential: bool | None = None,
    batch: int | None = None,
) -> CasePlan:
    """Cases each rule of `policy` (a release.yaml path, dict or Policy) needs for 80 % power.

    `effect` is the distance of the truth beyond each threshold, as a share of the
    metric's range (default: the policy's `effect`, 0.05; for no_regression the
    margin, i.e. two equal releases). `result` (a pilot run) and `baseline` give
    the spreads. `sequential=True` plans for `evaluate(..., until_decided=True)` (a
    policy with `sequential:` is planned that way anyway), with looks every `batch`
    cases. `str(plan)` is a readable table, `plan.cases` the gate's figure.
    """
    return plan_cases(
        load_policy(policy),
        result=result,
        baseline=baseline,
        effect=effect,
        confidence=confidence,
        sequential=sequential,
        batch=batch,
    )
