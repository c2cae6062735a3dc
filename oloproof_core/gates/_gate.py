"""The gate: every rule's outcome combined into one verdict for a run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from oloproof_core.gates._outcome import Outcome, RuleOutcome


def combine(outcomes: Sequence[Outcome]) -> Outcome:
    """Pass only if every rule passes; fail if any fails; otherwise inconclusive."""
    if any(outcome == "fail" for outcome in outcomes):
        return "fail"
    if all(outcome == "pass" for outcome in outcomes):
        return "pass"
    return "inconclusive"


def more_cases_may_settle(outcome: str, rules: Sequence[Mapping[str, Any]]) -> bool:
    """Whether more cases could still decide a gate (`rules`: each rule's `to_dict()`):
    it is inconclusive, and not only because a rule waits for a first approved release
    to compare with (no number of cases settles that)."""
    return outcome == "inconclusive" and any(
        rule.get("outcome") == "inconclusive"
        and not (rule.get("figures") or {}).get("first_release")
        for rule in rules
    )


@dataclass(frozen=True, slots=True)
class Gate:
    """The decision of a policy about one run.

    `outcome` is "pass", "fail" or "inconclusive"; `rules` holds each rule's
    outcome, figures and reason in the policy's order. `str(gate)` is a one-line
    verdict; `to_dict()` is what the JSON result and the dashboard read. `caveat` says
    when the figures decided on are not ones the platform can vouch for (`run_caveat`).
    """

    outcome: Outcome
    rules: tuple[RuleOutcome, ...]
    confidence: float
    policy: dict[str, Any] = field(default_factory=dict)
    baseline: dict[str, Any] | None = None
    caveat: str | None = None

    @classmethod
    def from_rules(
        cls,
        rules: Sequence[RuleOutcome],
        *,
        confidence: float,
        policy: dict[str, Any],
        baseline: dict[str, Any] | None,
        caveat: str | None = None,
    ) -> Gate:
        return cls(
            outcome=combine([rule.outcome for rule in rules]),
            rules=tuple(rules),
            confidence=confidence,
            policy=policy,
            baseline=baseline,
            caveat=caveat,
        )

    @property
    def passed(self) -> bool:
        return self.outcome == "pass"

    @property
    def more_cases_may_settle(self) -> bool:
        """Whether more cases could still decide it (see `more_cases_may_settle`)."""
        return more_cases_may_settle(self.outcome, [rule.to_dict() for rule in self.rules])

    def rule_outcomes(self, outcome: Outcome) -> list[RuleOutcome]:
        return [rule for rule in self.rules if rule.outcome == outcome]

    def __str__(self) -> str:
        verdict = f"gate {self.outcome.upper()}: " + "; ".join(str(rule) for rule in self.rules)
        return verdict if self.caveat is None else f"{verdict} — {self.caveat}"

    def __bool__(self) -> bool:
        # `assert result.gate` must never pass on a failed gate, and "the gate is there"
        # is `gate is not None`: so a gate has no truth value, and says what to write.
        raise TypeError(
            f"a gate has no truth value (this one is {self.outcome}): test "
            "`gate.passed` or `gate.outcome == 'pass'`, or use "
            "oloproof.testing.assert_gate(result) in tests; `gate is not None` says "
            "whether a run was gated"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "summary": str(self),
            "confidence": self.confidence,
            "policy": dict(self.policy),
            "baseline": self.baseline,
            "rules": [rule.to_dict() for rule in self.rules],
            "caveat": self.caveat,
        }


def run_caveat(provenance: dict[str, Any]) -> str | None:
    """What a gate must say of a run whose system could reach its figures or its answers:
    run in oloproof's own process, or in processes without a sandbox."""
    execution = provenance.get("execution") or {}
    if execution.get("measurements") != "not protected":
        return None
    sandbox = execution.get("sandbox") or {}
    if execution.get("isolation") == "thread":
        where = "the system ran in oloproof's own process"
    else:
        where = f"the system ran without a sandbox ({sandbox.get('reason') or 'none was made'})"
    return (
        f"decided on figures that are not protected: {where}, so it could have read the "
        "answers or changed its speed and cost (docs/isolation.md)"
    )
