"""Planning a run: how many cases each rule of a policy needs for 80 % power.

`plan_cases(policy, result=..., baseline=..., effect=...)` answers "how many
cases should the next run have?" before it is run. For each interval rule the
truth is placed a stated `effect` beyond the threshold, on the passing side (a
share of the metric's range; the policy's `effect`, default 0.05), and the
number of cases with an 80 % chance of passing is computed with the formulas of
`oloproof_core.stats._power` for pass/fail rates (exact), and for scores and
paired differences by simulating the betting capital the gate reads
(`oloproof_core.stats.sequential_cases_for_power`; the betting formula of
`_power`, which the gate's own readouts use, is a few points optimistic at a few
hundred cases). For `no_regression` the default effect is the margin itself: two
*equal* releases, the usual question.

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

Sequential policies (or `sequential=True`, as for `--until-decided`) read the
anytime-valid sequence instead, which needs more cases than the exact
pass/fail interval: each rule's figure is then the number of cases to make
available (the horizon) for 80 % power, simulated on the gate's own capital
(`oloproof_core.stats.sequential_cases_for_power`), with the average number of
cases a run with looks every `batch` cases actually uses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from oloproof_core.gates._no_regression import NoRegressionRule
from oloproof_core.gates._rules import BoundRule
from oloproof_core.stats import (
    DIFFERENCE_TUNING,
    POWER,
    SCORE_TUNING,
    BetTuning,
    betting_cases_for_power,
    proportion_cases_for_power,
    sequential_cases_for_power,
)

if TYPE_CHECKING:
    from oloproof_core.gates._schema import PolicySpec
    from oloproof_core.results.result import Result

__all__ = ["CasePlan", "RulePlan", "plan_cases", "plan_rule"]


class Policy(Protocol):
    """What planning reads of a policy. `Policy` itself calls `plan_rule` for its gate's
    text, so planning names only these and never imports it."""

    @property
    def spec(self) -> PolicySpec: ...

    @property
    def rules(self) -> tuple[Any, ...]: ...

    @property
    def sequential(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class RulePlan:
    rule: str
    cases: int | None
    effect: float
    truth: float
    sd: float | None
    basis: str
    mean_cases_run: float | None = None
    """Sequential rules: the average number of cases run before the gate stops."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "cases": self.cases,
            "effect": self.effect,
            "truth": self.truth,
            "sd": self.sd,
            "basis": self.basis,
            "mean_cases_run": self.mean_cases_run,
        }

    def describe(self) -> str:
        count = "—" if self.cases is None else f"{self.cases:,}"
        run = ""
        if self.mean_cases_run is not None:
            run = f", about {self.mean_cases_run:,.0f} run on average"
        return (
            f"{self.rule}: {count} cases{run} (truth {self.truth:g}, effect "
            f"{self.effect:g}; {self.basis})"
        )


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
        lines.extend(f"  {rule.describe()}" for rule in self.rules)
        lines.extend(f"  {note}" for note in self.notes)
        return "\n".join(lines)


def _values(run: Result | None, metric: str) -> tuple[list[float], str | None, tuple[float, float]]:
    if run is None or not any(m.metric == metric for m in run.metrics):
        return [], None, (0.0, 1.0)
    # In case order, not by id: a gate decided on the workers plans its undecided rules
    # from narrow columns, whose ids are read from the store only when asked for.
    from oloproof_core.results.compare._values import values_listed

    estimate = run.metric(metric)
    observed = [v for v in values_listed(run, estimate) if v is not None]
    return observed, estimate.value_type, estimate.score_range


def _sd(values: list[float]) -> float | None:
    return float(np.std(values, ddof=1)) if len(values) > 1 else None


@dataclass(frozen=True, slots=True)
class _Reading:
    """How the gate will read its intervals: fixed-size, or sequential with looks every `batch`."""

    level: float
    batch: int | None = None

    def betting(
        self,
        plan: RulePlan,
        unit: tuple[float, float, float],
        support: Any,
        side: Any,
        tuning: BetTuning,
    ) -> RulePlan:
        """`plan` simulated on the betting capital the gate reads; `unit` = (truth, threshold, sd).

        A fixed-size betting interval of N cases is the sequence's last look at a
        horizon of N, so one simulation serves both readings; only a sequential
        gate stops early (`mean_cases_run`).
        """
        truth, threshold, sd = unit
        found = sequential_cases_for_power(
            truth,
            threshold,
            sd,
            support=support,
            side=side,
            batch=self.batch or 1,
            confidence=self.level,
            power=POWER,
            tuning=tuning,
        )
        how = "simulated" if found.simulated else "betting formula"
        if self.batch is None:
            cases = plan.cases if found.cases is None else found.cases
            return replace(plan, cases=cases, basis=f"{plan.basis}; {how}")
        basis = f"{plan.basis}; sequential (anytime-valid, {how})"
        return replace(plan, cases=found.cases, basis=basis, mean_cases_run=found.mean_cases_run)


def _plan_bound(rule: BoundRule, pilot: Result | None, share: float, reading: _Reading) -> RulePlan:
    values, value_type, (low, high) = _values(pilot, rule.metric)
    level, span = reading.level, high - low
    effect = share * span
    direction = 1.0 if rule.side == "min" else -1.0
    truth = min(high, max(low, rule.threshold + direction * effect))
    unit_truth, unit_threshold = (truth - low) / span, (rule.threshold - low) / span
    if value_type in (None, "pass_fail"):
        basis = "pass/fail, exact" if value_type else "no pilot run: planned as a pass/fail rate"
        cases = proportion_cases_for_power(unit_truth, unit_threshold, level, POWER)
        plan = RulePlan(rule.label, cases, effect, truth, None, basis)
        if reading.batch is None:  # the exact interval's plan is exact
            return plan
        unit_sd, support = math.sqrt(unit_truth * (1.0 - unit_truth)), "two-point"
    else:
        sd = _sd(values)
        basis = "scores, spread of the pilot run"
        if sd is None:
            sd, basis = math.sqrt((truth - low) * (high - truth)), "scores, largest possible spread"
        cases = betting_cases_for_power(sd, effect, level, POWER)
        plan = RulePlan(rule.label, cases, effect, truth, sd, basis)
        unit_sd, support = sd / span, "continuous"
    unit = (unit_truth, unit_threshold, unit_sd)
    return reading.betting(plan, unit, support, rule.side, SCORE_TUNING)


def _plan_regression(
    rule: NoRegressionRule,
    pilot: Result | None,
    baseline: Result | None,
    share: float | None,
    reading: _Reading,
) -> RulePlan:
    base_values, base_type, (low, high) = _values(baseline, rule.metric)
    pilot_values, pilot_type, range_pilot = _values(pilot, rule.metric)
    if not base_values:
        low, high = range_pilot
    effect = rule.margin if share is None else share * (high - low)
    sd, basis = None, ""
    if pilot is not None and baseline is not None and pilot_values and base_values:
        from oloproof_core.results.compare import compare_runs

        paired = compare_runs(baseline, pilot, confidence=reading.level).metric(rule.metric)
        sd, basis = paired.difference_sd(), "spread of the paired differences"
    elif base_values or pilot_values:
        single = _sd(base_values or pilot_values) or 0.5 * (high - low)
        sd, basis = math.sqrt(2.0) * single, "one run's spread × √2 (uncorrelated releases)"
    if not sd:
        sd, basis = high - low, "no runs: largest possible spread"
    cases = betting_cases_for_power(sd, effect, reading.level, POWER)
    truth = -rule.margin + effect
    plan = RulePlan(rule.label, cases, effect, truth, sd, basis)
    # The paired interval reads differences in [-span, span] mapped onto [0, 1].
    span = high - low
    unit = ((truth / span + 1.0) / 2.0, (-rule.margin / span + 1.0) / 2.0, sd / (2.0 * span))
    pass_fail = (base_type or pilot_type) in (None, "pass_fail")
    support = "three-point" if pass_fail else "continuous"
    tuning = SCORE_TUNING if pass_fail else DIFFERENCE_TUNING
    return reading.betting(plan, unit, support, "min", tuning)


def _reading(
    policy: Policy, confidence: float | None, sequential: bool | None, batch: int | None
) -> _Reading:
    if batch is not None and batch < 1:
        raise ValueError(f"batch must be a whole number of cases, at least 1, got {batch!r}")
    looks = policy.spec.batch if batch is None else batch
    reads_sequentially = policy.sequential if sequential is None else sequential
    level = confidence or policy.spec.confidence or 0.95
    return _Reading(level, (looks or 50) if reads_sequentially else None)


def _plan_rule(
    policy: Policy,
    rule: object,
    result: Result | None,
    baseline: Result | None,
    effect: float | None,
    reading: _Reading,
) -> RulePlan | None:
    share = policy.spec.effect if effect is None else float(effect)
    if isinstance(rule, BoundRule):
        return _plan_bound(rule, result if result is not None else baseline, share, reading)
    if isinstance(rule, NoRegressionRule):
        return _plan_regression(rule, result, baseline, effect, reading)
    return None


def plan_rule(policy: Policy, rule: object, *, result: Result | None) -> RulePlan | None:
    """`rule`'s line of `plan_cases(policy, result=result)`, the same figure computed
    alone (None for a rule on counts): what a gate says of an undecided rule."""
    return _plan_rule(policy, rule, result, None, None, _reading(policy, None, None, None))


def plan_cases(
    policy: Policy,
    *,
    result: Result | None = None,
    baseline: Result | None = None,
    effect: float | None = None,
    confidence: float | None = None,
    sequential: bool | None = None,
    batch: int | None = None,
) -> CasePlan:
    """Cases each interval rule of `policy` needs for 80 % power (module docstring).

    `sequential` (default: whether the policy is) plans for the anytime-valid
    gate of `--until-decided`, with looks every `batch` cases (default: the
    policy's batch, else 50).
    """
    share = policy.spec.effect if effect is None else float(effect)
    if not 0.0 < share < 1.0:
        raise ValueError(f"effect must be a share of the range between 0 and 1, got {effect!r}")
    reading = _reading(policy, confidence, sequential, batch)
    plans = [
        plan
        for rule in policy.rules
        if (plan := _plan_rule(policy, rule, result, baseline, effect, reading)) is not None
    ]
    level = reading.level
    notes = ["each rule planned on its own; the gate needs every rule to pass"]
    if any(rule.kind == "measured" for rule in policy.rules):
        notes.append("latency and cost rules are left out: there is no power figure for them")
    if reading.batch is not None:
        notes.append(
            f"sequential gate: make this many cases available and run with --until-decided "
            f"(looks every {reading.batch} cases); it stops at the first look that decides"
        )
    return CasePlan(tuple(plans), POWER, level, tuple(notes))
