"""Release policies and the gates they decide.

A policy (`release.yaml`, schema in docs/policy.md) lists rules over a run's
metrics; `Policy.decide(result)` turns them into a `Gate` whose outcome is
pass, fail or inconclusive, with each rule's figures and reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof_core._util.names_on_first_use import names_on_first_use

if TYPE_CHECKING:
    from oloproof_core.gates._errors import PolicyError
    from oloproof_core.gates._gate import Gate, combine, more_cases_may_settle
    from oloproof_core.gates._outcome import MoreCases, Outcome, RuleOutcome
    from oloproof_core.gates._plan import CasePlan, RulePlan, plan_cases, plan_rule
    from oloproof_core.gates._policy import Policy, load_policy
    from oloproof_core.gates._readouts import planned_readout
    from oloproof_core.gates._schema import SCHEMA_VERSION

# Loaded on first use: checking a policy before a run or a search needs its rules, not
# the statistics that decide them (numpy's import among them).
_EXPORTS: dict[str, str] = {
    "PolicyError": "._errors",
    **dict.fromkeys(["Gate", "combine", "more_cases_may_settle"], "._gate"),
    **dict.fromkeys(["MoreCases", "Outcome", "RuleOutcome"], "._outcome"),
    **dict.fromkeys(["CasePlan", "RulePlan", "plan_cases", "plan_rule"], "._plan"),
    **dict.fromkeys(["Policy", "load_policy"], "._policy"),
    "planned_readout": "._readouts",
    "SCHEMA_VERSION": "._schema",
}

__all__ = [
    "SCHEMA_VERSION",
    "CasePlan",
    "Gate",
    "MoreCases",
    "Outcome",
    "Policy",
    "PolicyError",
    "RuleOutcome",
    "RulePlan",
    "combine",
    "load_policy",
    "more_cases_may_settle",
    "plan_cases",
    "plan_rule",
    "planned_readout",
]

__getattr__ = names_on_first_use(__name__, _EXPORTS, globals())
