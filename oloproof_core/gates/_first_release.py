"""A rule that compares with the last approved release, before any release is approved.

`baseline: {last_approved: true}` names a run that does not exist on a new project:
the first release has nothing to regress from. Such a run is still decided on every
other rule; each rule that needs the baseline says what the policy's
`on_first_release` says (default `inconclusive`), with the missing baseline named
as its reason, and takes no part in Holm's procedure (it reads no interval).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof_core.gates._outcome import MoreCases, Outcome, RuleOutcome

if TYPE_CHECKING:
    from oloproof_core.gates._rules import Rule

METHOD = "no baseline: no release of the system has been approved yet"

_READING: dict[str, str] = {
    "pass": "the policy lets a first release pass it (on_first_release: pass)",
    "fail": "the policy fails a first release on it (on_first_release: fail)",
    "inconclusive": (
        "it cannot be decided until a run of it is approved (on_first_release: inconclusive, "
        "the default)"
    ),
}


def first_release_outcome(rule: Rule, *, system: str, outcome: Outcome) -> RuleOutcome:
    """What `rule` says for a run of `system` while no run of it has been approved."""
    who = system or "this system"
    reason = (
        f"There is no approved run of {who} to compare with yet (baseline: last_approved): "
        f"{_READING[outcome]}."
    )
    more = None
    if outcome == "inconclusive":
        more = MoreCases(
            None,
            METHOD,
            f"no number of cases settles it: once a run of {who} is approved, later runs "
            "are compared with it",
        )
    metric = getattr(rule, "metric", None)
    return RuleOutcome(
        rule=rule.label,
        kind=rule.kind,
        outcome=outcome,
        reason=reason,
        summary=f"no approved {who} run to compare with yet",
        metric=metric if isinstance(metric, str) else None,
        figures={
            "baseline": None,
            "first_release": True,
            "on_first_release": outcome,
            "system": system,
            "margin": getattr(rule, "margin", None),
        },
        more_cases=more,
    )
