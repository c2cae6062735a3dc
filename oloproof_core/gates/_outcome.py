"""What one rule concluded about one run: pass, fail or inconclusive, and why."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

Outcome = Literal["pass", "fail", "inconclusive"]
OUTCOMES: tuple[Outcome, ...] = ("pass", "fail", "inconclusive")


@dataclass(frozen=True, slots=True)
class MoreCases:
    """Roughly how many more cases would make an inconclusive rule conclusive.

    `count` is None when no number of cases would (the estimate sits on the
    threshold) or the search limit was reached; `note` then says which.
    `power_cases` is the total number of cases for 80 % power at `power_effect`
    (see `oloproof_core.gates._more_cases`). `plan` is the rule's line of `oloproof
    plan` for this run (`RulePlan.to_dict()`): the one figure the gate's text, the
    command and the dashboard say, the others being kept as data.
    """

    count: int | None
    method: str
    note: str = ""
    power_cases: int | None = None
    """Total cases for an 80 % chance of passing at `power_effect` from the threshold."""
    power_effect: float | None = None
    plan: dict[str, Any] | None = None

    def with_power(self, cases: int | None, effect: float | None) -> MoreCases:
        return replace(self, power_cases=cases, power_effect=effect)

    def with_plan(self, plan: dict[str, Any] | None) -> MoreCases:
        return replace(self, plan=plan)

    def to_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "method": self.method,
            "note": self.note,
            "power_cases": self.power_cases,
            "power_effect": self.power_effect,
            "plan": self.plan,
        }


@dataclass(frozen=True, slots=True)
class RuleOutcome:
    """One rule's decision with the figures behind it and a one-sentence reason."""

    rule: str
    kind: str
    outcome: Outcome
    reason: str
    summary: str
    metric: str | None = None
    figures: dict[str, Any] = field(default_factory=dict)
    more_cases: MoreCases | None = None

    def __str__(self) -> str:
        return f"{self.rule} {self.outcome}" + (f" ({self.summary})" if self.summary else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "kind": self.kind,
            "metric": self.metric,
            "outcome": self.outcome,
            "reason": self.reason,
            "summary": self.summary,
            "figures": dict(self.figures),
            "more_cases": None if self.more_cases is None else self.more_cases.to_dict(),
        }
