"""One answer to "how many more cases?" on the run page: the gate's planning figure.

The engine records, for each undecided rule, a projection ("~80 more cases behaving
like these would decide it") and a power figure at the distance this run happened to
show (which can be "1 case in all"), and `oloproof plan` answers at the policy's
planning effect (2,185 in all). Side by side they contradicted each other. The page
says one of them, the plan's (`runs.selectors.gate_plan`, which is `oloproof plan`'s):
per rule on the rule's line, for the gate in its summary and in the planning box. A
rule the plan leaves out (one waiting for a first approved release) keeps the engine's
note, and a gate with no plan keeps the engine's figures whole.

The engine's gate text now says the same plan figure itself (`MoreCases.plan`), so for
a gate it decided the summary below is its own; the replacement is for gates recorded
before it did, whose stored summary still says the projection.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from runs.selectors.gate_plan import GatePlan
from runs.views.gate_wording import RuleReadout


def _cases(count: int) -> str:
    return f"{count:,} case" + ("" if count == 1 else "s")


def rule_more_cases(plan: GatePlan, label: str) -> str | None:
    """The plan's answer for one rule, as a sentence; None when the plan has no figure
    for it (the engine's own note stands)."""
    planned = next((rule for rule in plan.rules if rule.rule == label), None)
    if planned is None:
        return None
    if planned.cases is None:
        return (
            "No number of cases can be planned for this rule at the policy's effect of "
            f"{plan.effect_text} of the range."
        )
    return (
        f"About {_cases(planned.cases)} in all (this run has {plan.n_cases:,}) give this rule "
        f"an 80 % chance of passing when the truth is {plan.effect_text} of the range beyond "
        f"its threshold; the whole gate needs about {plan.cases_text} (below)."
    )


def rules_with_one_answer(
    readouts: Sequence[RuleReadout], plan: GatePlan | None
) -> list[RuleReadout]:
    """The rules' readouts, each undecided one saying the plan's figure."""
    if plan is None:
        return list(readouts)
    answered = []
    for readout in readouts:
        said = rule_more_cases(plan, readout.label) if readout.outcome == "inconclusive" else None
        answered.append(readout if said is None else replace(readout, more=said))
    return answered


def gate_summary(*, summary: str, rules: Sequence[Mapping[str, Any]], plan: GatePlan | None) -> str:
    """The gate's recorded summary, each planned rule's readout replaced by the plan's.

    A rule reads "<rule> <outcome> (<its summary>)" in the gate's summary, and an
    undecided rule's summary ends in "; <readout>" (the engine's short readout, which
    has no semicolon of its own): that last part is what is replaced.
    """
    if plan is None:
        return summary
    for rule in rules:
        own, label = str(rule.get("summary") or ""), str(rule.get("rule") or "")
        planned = next((item for item in plan.rules if item.rule == label), None)
        if planned is None or rule.get("outcome") != "inconclusive" or "; " not in own:
            continue
        count = (
            "no planned number of cases"
            if planned.cases is None
            else (f"about {_cases(planned.cases)} in all for an 80 % chance of passing")
        )
        summary = summary.replace(f"({own})", f"({own.rsplit('; ', 1)[0]}; {count})")
    return summary
