"""A system and evaluators whose texts PostgreSQL refuses (tests/runs/writers/test_stored_alike.py).

In a module of their own, free of Django, so a run's sandboxed processes import them.
"""

from __future__ import annotations

from typing import Any

from oloproof import system
from oloproof.evaluators import evaluator
from oloproof_core.cases.verdict import Verdict


@system(name="stored-alike", version="1")
def answer(case: dict[str, Any]) -> dict[str, str]:
    return {"label": "refund" if "refund" in case["question"] else "other"}


@evaluator(criterion="nul_feedback", reads=("output",))
def nul_feedback(case: Any) -> Any:
    return True, "bad\x00byte"


@evaluator(criterion="nul_error", reads=("output",))
def nul_error(case: Any) -> bool:
    raise ValueError("upstream said \x00 and stopped")


@evaluator(criterion="long_sub", reads=("output",), value_type="score")
def long_sub(case: Any) -> Verdict:
    return Verdict(value=1.0, feedback="ok", scores={"s" * 299: 1.0})


@evaluator(criterion="short_sub", reads=("output",), value_type="score")
def short_sub(case: Any) -> Verdict:
    return Verdict(value=1.0, feedback="ok", scores={"s" * 250: 1.0})
