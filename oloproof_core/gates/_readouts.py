"""What an undecided rule says of "how many more cases?", in its reason and its summary.

Three figures answer near enough the same question: the projection (cases behaving like
these that would decide it), the power figure at the distance this run happened to show
(which can be "1 case in all"), and `oloproof plan`'s figure at the policy's planning
effect. Said side by side they contradicted each other, so a rule says the plan's figure
alone (`MoreCases.plan`), as the command, the run page and its planning box do; the
other two stay in the rule's data. A rule with no plan (its readouts skipped, a planner
not given) says the engine's own figures as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from oloproof_core.gates._outcome import MoreCases


def cases_text(count: int) -> str:
    return f"{count:,} case" + ("" if count == 1 else "s")


def planned_short(plan: dict[str, Any]) -> str:
    """The plan's figure as a rule's summary ends (the run page's summary says the same)."""
    cases = plan.get("cases")
    if cases is None:
        return "no planned number of cases"
    return f"about {cases_text(int(cases))} in all for an 80 % chance of passing"


def planned_sentence(plan: dict[str, Any]) -> str:
    """The plan's figure, with the question it answers, as a rule's reason ends."""
    cases, effect, truth = plan.get("cases"), plan.get("effect"), plan.get("truth")
    if cases is None:
        return (
            "no number of cases gives it an 80 % chance of passing at the policy's planning "
            f"effect ({effect:.3g} beyond its threshold)"
        )
    return (
        f"about {cases_text(int(cases))} in all give it an 80 % chance of passing when the "
        f"truth is {truth:.3g}, {effect:.3g} beyond its threshold (the policy's planning "
        "effect; oloproof plan's figure)"
    )


def _note(count: object, note: object) -> str:
    """A note that says why no projection could be made, or how many more labels would
    settle the rule: words, or another question, so it stands beside the plan's figure."""
    return f"{note}; " if count is None and note else ""


def _power_text(more: MoreCases) -> str:
    if more.power_cases is None:
        return ""
    return f" ({more.power_cases:,} cases in all give 80 % power)"


def readout(more: MoreCases) -> str:
    """The end of an undecided rule's reason."""
    if more.plan is not None:
        return _note(more.count, more.note) + planned_sentence(more.plan)
    if more.count is None:
        return more.note + _power_text(more)
    projection = f"roughly {more.count:,} more cases at the observed rate would decide it"
    return projection + _power_text(more)


def short_readout(more: MoreCases) -> str:
    """The end of an undecided rule's summary (the gate's one line)."""
    if more.plan is not None:
        return planned_short(more.plan)
    if more.count is None:
        if more.power_cases is not None:
            return f"{more.power_cases:,} cases for 80 % power"
        return more.note.split(";")[0]
    return f"~{more.count:,} more cases needed"


def planned_readout(more: Mapping[str, Any]) -> str | None:
    """A recorded rule's `more_cases` as its reason ends, from its plan (a sentence);
    None for a gate recorded before rules said the plan's figure."""
    plan = more.get("plan")
    if not isinstance(plan, Mapping):
        return None
    said = _note(more.get("count"), more.get("note")) + planned_sentence(dict(plan))
    return said[0].upper() + said[1:] + "."
