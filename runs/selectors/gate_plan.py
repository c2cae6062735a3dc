"""How many cases an undecided gate needs: the engine's planning over the run's own policy.

An inconclusive gate means the run was too small to tell. The page answers the next
question, "how many cases then?", with `oloproof plan`'s figure: the number of cases
with which every interval rule passes with 80 % probability when the truth sits the
policy's planning effect beyond its threshold, with spreads taken from this run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache

import oloproof_core as engine
from oloproof_core.gates import (
    PolicyError,
    RulePlan,
    load_policy,
    more_cases_may_settle,
    plan_cases,
)
from runs.models import Run
from runs.selectors.results import run_result

PLAN_CACHE_S = 3600
NOT_PLANNABLE = "not plannable"
"""Cached in place of a plan when there is none, so the attempt is not repeated."""

POLICY_KEYS = ("version", "confidence", "rules", "multiplicity", "effect")
"""The keys of a recorded policy that planning reads (its baseline is looked up apart)."""


@dataclass(frozen=True, slots=True)
class GatePlan:
    """Cases for 80 % power per interval rule, and the gate's figure (the largest)."""

    cases: int | None
    n_cases: int
    effect: float
    confidence: float
    rules: tuple[RulePlan, ...]
    first_release: bool = False
    """The gate's no_regression rules wait for a first approved release: left out."""

    @property
    def cases_text(self) -> str:
        return "—" if self.cases is None else f"{self.cases:,}"

    @property
    def effect_text(self) -> str:
        return f"{100 * self.effect:.3g} %"

    @property
    def largest(self) -> RulePlan | None:
        planned = [rule for rule in self.rules if rule.cases is not None]
        return max(planned, key=lambda rule: rule.cases or 0, default=None)


def run_gate_plan(*, run: Run) -> GatePlan | None:
    """The planning figure for a run whose gate is inconclusive; None for any other gate.

    None too when the run's recorded policy cannot be planned (no interval rule, or a
    policy recorded by an older version without its rules), or when no number of cases
    can settle the gate (only rules waiting for a first approved release are undecided).
    """
    gate = getattr(run, "gate", None)
    if gate is None or not more_cases_may_settle(gate.outcome, gate.rules):
        return None
    recorded = (run.provenance or {}).get("policy")
    if not isinstance(recorded, Mapping) or not recorded.get("rules"):
        return None
    # A finished run's verdicts never change, so its plan is computed once: reading
    # every verdict of a large run on each view of its page would be the page's cost.
    stamp = "-" if run.finished_at is None else f"{run.finished_at.timestamp():.6f}"
    key = f"oloproof:gate-plan:{run.pk}:{stamp}:{run.policy_digest}"
    cached = cache.get(key)
    if cached is None:
        cached = _planned(run, recorded) or NOT_PLANNABLE
        cache.set(key, cached, PLAN_CACHE_S)
    return None if cached == NOT_PLANNABLE else cached


def _planned(run: Run, recorded: Mapping[str, Any]) -> GatePlan | None:
    try:
        first_release = _first_release(run)
        policy = load_policy(_plannable(recorded, first_release=first_release))
        plan = plan_cases(policy, result=run_result(run=run, with_content=False))
    except (PolicyError, engine.OloproofError, ValueError):
        return None
    if not plan.rules:
        return None
    return GatePlan(
        cases=plan.cases,
        n_cases=run.cases_total,
        effect=policy.spec.effect,
        confidence=plan.confidence,
        rules=plan.rules,
        first_release=first_release,
    )


def _first_release(run: Run) -> bool:
    """Whether the gate's no_regression rules wait for a first approved release: no
    number of cases settles those, so they are left out of the plan."""
    return any((rule.get("figures") or {}).get("first_release") for rule in run.gate.rules)


def _plannable(recorded: Mapping[str, Any], *, first_release: bool = False) -> dict[str, Any]:
    policy = {key: recorded[key] for key in POLICY_KEYS if recorded.get(key) is not None}
    if first_release:
        rules = policy.get("rules") or []
        policy["rules"] = [rule for rule in rules if "no_regression" not in rule]
    if isinstance(recorded.get("sequential"), Mapping):
        policy["sequential"] = dict(recorded["sequential"])
    return policy
