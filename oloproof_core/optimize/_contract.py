"""A metric that breaks its contract stops the search at the evaluation that shows it.

The metric return value contract check (docs/metrics.md) turns a wrong return value
into a missing verdict whose error names the contract. A run goes on and counts the
case as missing; a search must not: every candidate would score the same nothing, the
budget would be spent on it, and the optimization would end looking like one that
found no better text. So each evaluation's fresh verdicts are read, and the first
contract error ends the optimization with its message.
"""

from __future__ import annotations

from collections.abc import Iterable

from oloproof_core.cases.case import CaseResult
from oloproof_core.errors import ContractError

_CONTRACT_ERROR = "ContractError"
"""How a verdict's error starts when the evaluator broke its contract (its type's name)."""


class MetricContractError(ContractError):
    """An evaluator broke its contract on a case the search evaluated; the search stops."""


def contract_failure(cases: Iterable[CaseResult]) -> MetricContractError | None:
    """The first contract error among the cases' verdicts, as the error that stops the search."""
    for case in cases:
        for criterion, verdict in case.verdicts.items():
            error = verdict.error or ""
            if verdict.value is None and error.startswith(_CONTRACT_ERROR):
                said = error.split(":", 1)[1].strip() if ":" in error else error
                return MetricContractError(
                    f"the search stopped: {criterion!r} broke the metric contract on case "
                    f"{case.id!r}, so no candidate can be scored.\n{said}"
                )
    return None
