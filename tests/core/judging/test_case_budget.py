"""`CaseBudget`: a case within a latency and a model cost, as the platform measured them."""

from __future__ import annotations

import pytest

from oloproof_core.cases.case import CaseResult
from oloproof_core.cases.observations import ModelCall
from oloproof_core.configs.evaluators import builtin_evaluator
from oloproof_core.errors import ConfigError, DeclarationError
from oloproof_core.judging.evaluators import CaseBudget, CaseView


def _case(latency_ms: float | None, *costs: float | None) -> CaseResult:
    case = CaseResult(id="c", input={"q": 1}, expected=None, output="done")
    case.measurements.latency_ms = latency_ms
    case.measurements.model_calls.extend(
        ModelCall("system", "m", 10, 2, cost, 5.0) for cost in costs
    )
    return case


def _verdict(evaluator: CaseBudget, case: CaseResult) -> object:
    return evaluator.to_verdict(evaluator.judge(CaseView(case, evaluator.reads, "t")))


def test_a_case_within_its_budget_passes_and_one_over_it_says_by_how_much() -> None:
    budget = CaseBudget(max_latency_ms=500, max_cost_usd=0.01)

    assert _verdict(budget, _case(120.0, 0.004, 0.005)).value == 1.0  # type: ignore[attr-defined]
    slow = _verdict(budget, _case(900.0, 0.004))
    costly = _verdict(budget, _case(100.0, 0.008, 0.004))

    assert slow.value == 0.0  # type: ignore[attr-defined]
    assert "took 900 ms (at most 500)" in slow.feedback  # type: ignore[attr-defined]
    assert costly.value == 0.0  # type: ignore[attr-defined]
    assert "cost $0.012 (at most $0.01)" in costly.feedback  # type: ignore[attr-defined]


def test_a_cost_that_could_not_be_measured_leaves_the_verdict_missing() -> None:
    verdict = _verdict(CaseBudget(max_cost_usd=0.01), _case(100.0, None))

    assert verdict.value is None  # type: ignore[attr-defined]
    assert "could not measure its cost" in verdict.error  # type: ignore[attr-defined]


def test_it_reads_the_measurements_so_the_cache_keys_on_them() -> None:
    assert CaseBudget(max_latency_ms=1).reads == ("measurements",)


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({}, "needs a bound"),
        ({"max_latency_ms": -1}, "at least 0"),
        ({"max_cost_usd": "cheap"}, "must be a number"),
    ],
)
def test_bad_bounds_are_refused_when_declared(given: dict[str, object], said: str) -> None:
    with pytest.raises(DeclarationError, match=said):
        CaseBudget(**given)  # type: ignore[arg-type]


def test_a_run_config_names_it_with_its_parameters() -> None:
    made = builtin_evaluator("c.yaml:4", "CaseBudget", {"criterion": "fast", "max_latency_ms": 50})
    assert isinstance(made, CaseBudget)
    with pytest.raises(ConfigError, match="did you mean 'max_cost_usd'"):
        builtin_evaluator("c.yaml:4", "CaseBudget", {"max_cost": 1})
