"""Planning a run: how many cases each rule of a policy needs for 80 % power.

`plan_cases(policy, result=..., baseline=..., effect=...)` answers "how many
cases should the next run have?" before it is run. For each interval rule the
truth is placed a stated `effect` beyond the threshold, on the passing side (a
share of the metric's range; the policy's `effect`, default 0.05), and the
number of cases with an 80 % chance of passing is computed with the formulas of
`oloproof_core.stats._power`: exact for pass/fail rates, the betting interval's
constant for scores and paired differences. For `no_regression` the default
effect is the margin itself: two *equal* releases, the usual question.

Spreads come from the runs given: `result` (a pilot run of the candidate) and
`baseline`. A score rule uses the pilot's standard deviation, else the largest
possible for its mean (two-point at the range's ends). A `no_regression` rule
uses the spread of the paired differences when both runs are given, else
`sqrt(2)` times one run's spread (uncorrelated releases: conservative, since
releases of one system are positively correlated), else the largest possible.
Each rule is planned on its own: the gate passes with 80 % probability only if
every rule does, so the gate's figure is the largest, and a gate with several
rules near their thresholds needs more. Rules on counts (missing, require) need
no planning.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from oloproof_core.gates._no_regression import NoRegressionRule
from oloproof_core.gates._rules import BoundRule
from oloproof_core.stats import POWER, betting_cases_for_power, proportion_cases_for_power

if TYPE_CHECKING:
    from oloproof_core.gates._policy import Policy
    from oloproof_core.result import Result

__all__ = ["CasePlan", "RulePlan", "plan_cases"]


@dataclass(frozen=True, slots=True)
class RulePlan:
    rule: str
    cases: int | None
    effect: float
    truth: float
    sd: float | None
    basis: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "cases": self.cases,
            "effect": self.effect,
            "truth": self.truth,
            "sd": self.sd,
            "basis": self.basis,
        }


@dataclass(frozen=True, slots=True)
class CasePlan:
    """Cases for `power` per rule; `cases` is the largest (the gate's figure)."""

    rules: tuple[RulePlan, ...]
    power: float
    confidence: float
    notes: tuple[str, ...] = field(default=())

    @property
    def cases(self) -> int | None:
        figures = [rule.cases for rule in self.rules]
        if not figures or any(figure is None for figure in figures):
            return None
        return max(figure for figure in figures if figure is not None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "power": self.power,
            "confidence": self.confidence,
            "rules": [rule.to_dict() for rule in self.rules],
            "notes": list(self.notes),
        }

    def __str__(self) -> str:
        lines = [
            f"cases for {100 * self.power:.0f} % power at {100 * self.confidence:.3g} % "
            f"confidence: {'—' if self.cases is None else f'{self.cases:,}'}"
        ]
        for rule in self.rules:
            count = "—" if rule.cases is None else f"{rule.cases:,}"
            lines.append(
                f"  {rule.rule}: {count} cases (truth {rule.truth:g}, effect "
                f"{rule.effect:g}; {rule.basis})"
            )
        lines.extend(f"  {note}" for note in self.notes)
        return "\n".join(lines)


def _values(run: Result | None, metric: str) -> tuple[list[float], str | None, tuple[float, float]]:
    if run is None or not any(m.metric == metric for m in run.metrics):
        return [], None, (0.0, 1.0)
    from oloproof_core.compare._values import values_by_case

    estimate = run.metric(metric)
    observed = [v for v in values_by_case(run, estimate).values() if v is not None]
    return observed, estimate.value_type, estimate.score_range


def _sd(values: list[float]) -> float | None:
    return float(np.std(values, ddof=1)) if len(values) > 1 else None


def _plan_bound(rule: BoundRule, pilot: Result | None, share: float, level: float) -> RulePlan:
    values, value_type, (low, high) = _values(pilot, rule.metric)
    effect = share * (high - low)
    direction = 1.0 if rule.side == "min" else -1.0
    truth = min(high, max(low, rule.threshold + direction * effect))
    if value_type in (None, "pass_fail"):
        basis = "pass/fail, exact" if value_type else "no pilot run: planned as a pass/fail rate"
        unit = (truth - low) / (high - low), (rule.threshold - low) / (high - low)
        return RulePlan(rule.label, proportion_cases_for_power(*unit, level, POWER),
                        effect, truth, None, basis)  # fmt: skip
    sd = _sd(values)
    basis = "scores, spread of the pilot run"
    if sd is None:
        sd, basis = math.sqrt((truth - low) * (high - truth)), "scores, largest possible spread"
    return RulePlan(rule.label, betting_cases_for_power(sd, effect, level, POWER),
                    effect, truth, sd, basis)  # fmt: skip


def _plan_regression(
    rule: NoRegressionRule,
    pilot: Result | None,
    baseline: Result | None,
    share: float | None,
    level: float,
) -> RulePlan:
    base_values, _, (low, high) = _values(baseline, rule.metric)
    pilot_values, _, range_pilot = _values(pilot, rule.metric)
    if not base_values:
        low, high = range_pilot
    effect = rule.margin if share is None else share * (high - low)
    sd, basis = None, ""
    if pilot is not None and baseline is not None and pilot_values and base_values:
        from oloproof_core.compare import compare_runs

        paired = compare_runs(baseline, pilot, confidence=level).metric(rule.metric)
        sd, basis = paired.difference_sd(), "spread of the paired differences"
    elif base_values or pilot_values:
        single = _sd(base_values or pilot_values) or 0.5 * (high - low)
        sd, basis = math.sqrt(2.0) * single, "one run's spread × √2 (uncorrelated releases)"
    if not sd:
        sd, basis = high - low, "no runs: largest possible spread"
    cases = betting_cases_for_power(sd, effect, level, POWER)
    return RulePlan(rule.label, cases, effect, -rule.margin + effect, sd, basis)


def plan_cases(
    policy: Policy,
    *,
    result: Result | None = None,
    baseline: Result | None = None,
    effect: float | None = None,
    confidence: float | None = None,
) -> CasePlan:
    """Cases each interval rule of `policy` needs for 80 % power (module docstring)."""
    level = confidence or policy.spec.confidence or 0.95
    share = policy.spec.effect if effect is None else float(effect)
    if not 0.0 < share < 1.0:
        raise ValueError(f"effect must be a share of the range between 0 and 1, got {effect!r}")
    pilot = result if result is not None else baseline
    plans: list[RulePlan] = []
    for rule in policy.rules:
        if isinstance(rule, BoundRule):
            plans.append(_plan_bound(rule, pilot, share, level))
        elif isinstance(rule, NoRegressionRule):
            plans.append(_plan_regression(rule, result, baseline, effect, level))
    notes = ["each rule planned on its own; the gate needs every rule to pass"]
    if policy.sequential:
        notes.append("sequential policy: run with --until-decided; it stops early when it can")
    return CasePlan(tuple(plans), POWER, level, tuple(notes))
