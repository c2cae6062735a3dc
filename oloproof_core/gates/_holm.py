"""Gate-level error control across rules (Holm's step-down procedure).

A gate passes only when every rule passes, so a false *pass* needs every rule to
pass: if any rule's truth sits at its threshold, the gate passes falsely at most
as often as that rule does (2.5 %), however many rules there are (an
intersection–union test; Berger, R. L. (1982), Technometrics 24(4), 295–300).
A false *fail* is different: one rule failing fails the gate, so with ten rules
at their thresholds each failing 2.5 % of the time the gate would falsely fail
about 22 % of the time. Holm's procedure (Holm 1979; see
`oloproof_core.stats._multiplicity`) keeps the gate's false-fail rate at 2.5 %:
with `k` interval rules, a rule's failure stands only if it still fails at the
level the step-down gives it, `1 − α / m` where `m` counts the rules whose
failure has not yet been confirmed (starting at `k`); a rule that fails only on
its own level becomes inconclusive. The same holds for sequential gates: the
anytime-valid intervals give anytime-valid p-values, for which Holm stays valid
at every look.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from oloproof_core.gates._outcome import MoreCases, RuleOutcome
from oloproof_core.gates._readouts import planned_sentence, planned_short

if TYPE_CHECKING:
    from oloproof_core.gates._context import DecisionContext
    from oloproof_core.gates._rules import Rule

METHOD = "Holm step-down across the gate's interval rules (false-fail rate ≤ 2.5 %)"


def holm_confirmed(rules: list[Rule], failed: list[bool], context: DecisionContext) -> list[bool]:
    """Which of the individually failing interval rules Holm's procedure confirms."""
    alpha = 1.0 - context.confidence
    remaining = len(rules)
    confirmed = [False] * len(rules)
    while remaining:
        # Each interval is two-sided at 1 − alpha', so its one-sided fail test is at alpha' / 2.
        level = 1.0 - alpha / remaining
        newly = [
            i
            for i, rule in enumerate(rules)
            if failed[i] and not confirmed[i] and rule.fails_at(context, level)
        ]
        if not newly:
            break
        for i in newly:
            confirmed[i] = True
        remaining -= len(newly)
    return confirmed


def apply_holm(
    rules: tuple[Rule, ...], outcomes: list[RuleOutcome], context: DecisionContext
) -> list[RuleOutcome]:
    """Outcomes with unconfirmed failures turned inconclusive (and saying why)."""
    picked = [i for i, rule in enumerate(rules) if rule.reads_interval]
    if len(picked) < 2:
        return outcomes
    failed = [outcomes[i].outcome == "fail" for i in picked]
    if not any(failed):
        return outcomes
    confirmed = holm_confirmed([rules[i] for i in picked], failed, context)
    result = list(outcomes)
    for index, was_failed, kept in zip(picked, failed, confirmed, strict=True):
        if was_failed and not kept:
            result[index] = _unconfirmed(outcomes[index], len(picked), context, rules[index])
    return result


def _unconfirmed(outcome: RuleOutcome, k: int, context: DecisionContext, rule: Rule) -> RuleOutcome:
    note = (
        f"it fails on its own, but not at the level Holm's procedure gives it across the "
        f"gate's {k} interval rules, so more cases are needed to confirm the failure"
    )
    figures = dict(outcome.figures, multiplicity=METHOD, fails_alone=True)
    more = context.with_plan(rule, outcome.more_cases or MoreCases(None, METHOD, note))
    # The plan's figure is said as any undecided rule's is, so no face says another.
    planned = "" if more.plan is None else f"; {planned_short(more.plan)}"
    return replace(
        outcome,
        outcome="inconclusive",
        reason=f"{outcome.reason.rstrip('.')}; {note}"
        + ("" if more.plan is None else f"; {planned_sentence(more.plan)}")
        + ".",
        summary=f"{outcome.summary}; unconfirmed after Holm across {k} rules{planned}",
        figures=figures,
        more_cases=more,
    )
