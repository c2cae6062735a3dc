"""Model usage summed by role, and shown in the result's table."""

from __future__ import annotations

from oloproof_core import CaseResult, Result
from oloproof_core.cases.observations import ModelCall
from oloproof_core.cases.usage import usage_by_role


def _call(role: str, cost: float | None) -> ModelCall:
    return ModelCall(
        role=role, model="m", input_tokens=10, output_tokens=2, cost_usd=cost, latency_ms=5.0
    )


def test_usage_is_summed_per_role_and_an_unpriced_call_makes_the_cost_unknown() -> None:
    usage = usage_by_role([_call("system", 0.1), _call("system", 0.2), _call("judge", None)])
    assert usage["system"].calls == 2
    assert usage["system"].cost_usd == 0.30000000000000004
    assert usage["system"].input_tokens == 20
    assert usage["judge"].cost_usd is None


def test_the_table_lists_model_calls_by_role() -> None:
    case = CaseResult(id="a", input={}, expected=None)
    case.measurements.model_calls.extend([_call("system", 0.5), _call("judge", None)])
    text = str(Result(metrics=[], cases=[case], provenance={}))
    assert "model calls (measured by oloproof):" in text
    assert "system: 1 calls, 10 tokens in, 2 out, $0.500000" in text
    assert "judge: 1 calls, 10 tokens in, 2 out, cost not measurable" in text
