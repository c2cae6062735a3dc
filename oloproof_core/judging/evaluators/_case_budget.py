"""`CaseBudget`: a case passes when its system call stayed within a latency and a model
cost, as the platform measured them (the parent's clock, the gateway's meter), never as
the system says."""

from __future__ import annotations

import math
from typing import Any

from oloproof_core.cases.verdict import PASSED, Verdict
from oloproof_core.errors import DeclarationError
from oloproof_core.judging.evaluators._base import Evaluator
from oloproof_core.judging.evaluators._case_view import CaseView


class CaseBudget(Evaluator):
    """Passes when the case took at most `max_latency_ms` and its system's model calls
    cost at most `max_cost_usd` (at least one bound). A figure that could not be measured
    (a call the gateway could not price) leaves the verdict missing, with why."""

    def __init__(
        self,
        *,
        criterion: str = "within_budget",
        max_latency_ms: float | None = None,
        max_cost_usd: float | None = None,
    ) -> None:
        super().__init__(criterion=criterion, reads=("measurements",))
        owner = f"CaseBudget(criterion={criterion!r})"
        self.max_latency_ms = _bound(max_latency_ms, "max_latency_ms", owner)
        self.max_cost_usd = _bound(max_cost_usd, "max_cost_usd", owner)
        if self.max_latency_ms is None and self.max_cost_usd is None:
            raise DeclarationError(f"{owner} needs a bound: max_latency_ms or max_cost_usd")

    def parameters(self) -> dict[str, Any]:
        return {"max_latency_ms": self.max_latency_ms, "max_cost_usd": self.max_cost_usd}

    def judge(self, case: CaseView) -> Verdict:
        seen = case.measurements
        over, unmeasured = [], []
        if self.max_latency_ms is not None:
            if seen.latency_ms is None:
                unmeasured.append("its latency")
            elif seen.latency_ms > self.max_latency_ms:
                over.append(f"took {seen.latency_ms:.0f} ms (at most {self.max_latency_ms:g})")
        if self.max_cost_usd is not None:
            if seen.cost_usd is None:
                unmeasured.append("its cost (a model call could not be priced)")
            elif seen.cost_usd > self.max_cost_usd:
                over.append(f"cost ${seen.cost_usd:.6g} (at most ${self.max_cost_usd:g})")
        if over:
            return Verdict(value=0.0, feedback="Over budget: " + "; ".join(over) + ".")
        if unmeasured:
            return Verdict.failed_to_judge("could not measure " + " and ".join(unmeasured))
        return PASSED


def _bound(value: Any, name: str, owner: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DeclarationError(f"{owner}: {name} must be a number, got {value!r}")
    if not (math.isfinite(value) and value >= 0):
        raise DeclarationError(f"{owner}: {name} must be a finite number of at least 0")
    return float(value)
