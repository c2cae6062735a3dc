"""What travels between the run and an evaluator's process, both ways, as JSON data.

To the process: the parts of a case the evaluator declared in `reads`, and nothing else
(`case_parts`); the process rebuilds a stand-in case from them (`stand_in`), so a part
not declared is not there to be read. Back: one message per verdict (`verdict_message`),
which the run checks again before it believes it (`verdict_from`): the process runs the
evaluator's code, and that code can write anything to its pipe.
"""

from __future__ import annotations

import traceback
from collections.abc import Mapping
from numbers import Real
from typing import Any

from oloproof_core._util.limits import text_problem
from oloproof_core.cases.case import CaseResult
from oloproof_core.cases.observations import Measurements, ModelCall
from oloproof_core.cases.transcript import Transcript
from oloproof_core.cases.verdict import PASSED, Verdict
from oloproof_core.errors import ContractError, UndeclaredReadError
from oloproof_core.judging.evaluators import Evaluator

FAILED = Verdict(value=0.0)

_ENDED_BY_CODE = (SystemExit, KeyboardInterrupt)


def case_parts(case: CaseResult, reads: tuple[str, ...]) -> dict[str, Any]:
    """The parts of `case` an evaluator declared, as JSON data."""
    parts: dict[str, Any] = {}
    for part in reads:
        if part == "measurements":
            measured = case.measurements
            parts[part] = {
                "latency_ms": measured.latency_ms,
                "protected": measured.protected,
                "calls": [
                    [
                        call.model,
                        call.input_tokens,
                        call.output_tokens,
                        call.cost_usd,
                        call.latency_ms,
                    ]
                    for call in measured.model_calls
                    if call.role == "system"
                ],
            }
        elif part == "trace":
            parts[part] = None if case.trace is None else case.trace.to_dict()
        else:
            parts[part] = getattr(case, part)
    return parts


def stand_in(case_id: str, parts: Mapping[str, Any]) -> CaseResult:
    """Inside the process: a case holding only the parts that were sent."""
    record = CaseResult(
        id=case_id,
        input=parts.get("input") or {},
        expected=parts.get("expected"),
        output=parts.get("output"),
        artifacts=parts.get("artifacts") or {},
        trace=Transcript.from_dict(parts["trace"]) if parts.get("trace") else None,
        workspace=parts.get("workspace"),
    )
    measured = parts.get("measurements")
    if isinstance(measured, Mapping):
        record.measurements = Measurements(
            latency_ms=measured.get("latency_ms"),
            model_calls=[ModelCall("system", *call) for call in measured.get("calls") or []],
            protected=bool(measured.get("protected", True)),
        )
    return record


def verdict_message(verdict: Verdict) -> list[Any]:
    """Inside the process: a judged verdict, as it travels back."""
    problem = None if verdict.feedback is None else text_problem(verdict.feedback)
    if problem:
        return ["error", f"ContractError: the verdict's feedback {problem}", ""]
    # Sub-scores as pairs: their order is the metrics' order, and a mapping would come
    # back sorted (the pool keeps replies as canonical JSON).
    return ["ok", verdict.value, verdict.feedback, [list(pair) for pair in verdict.scores.items()]]


def failure_message(exc: BaseException) -> list[Any]:
    """Inside the process: an evaluator that raised (SystemExit and KeyboardInterrupt
    included: raised by its own code, they end its verdict, not the run)."""
    said = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, _ENDED_BY_CODE):
        said = f"{type(exc).__name__}{f': {exc}' if str(exc) else ''} (raised by the evaluator's"
        said += " code: this verdict is missing, the run goes on)"
    return ["error", said, "".join(traceback.format_exception(exc))]


def over_limit_message(limit: float) -> list[Any]:
    return ["timeout", limit]


def undeclared_message(exc: UndeclaredReadError) -> list[Any]:
    return ["undeclared", str(exc)]


def verdict_from(message: Any, evaluator: Evaluator, over_limit: str) -> Verdict:
    """The run's verdict from a process's message, checked as if the process lied.

    `over_limit` is the reason given when the verdict ran over its time limit. An
    evaluator that read a part it did not declare raises `UndeclaredReadError` here, as
    it would have in the run's own process.
    """
    if not isinstance(message, list) or not message:
        return _malformed(message)
    kind = message[0]
    if kind == "ok" and len(message) == 4:
        try:
            return _checked(evaluator, message[1], message[2], message[3])
        except ContractError as exc:
            return Verdict.failed_to_judge(f"ContractError: {exc}")
    if kind == "error" and len(message) == 3:
        return Verdict.failed_to_judge(str(message[1]), str(message[2]))
    if kind == "timeout":
        return Verdict.failed_to_judge(over_limit)
    if kind == "undeclared" and len(message) == 2:
        raise UndeclaredReadError(str(message[1]))
    return _malformed(message)


def _checked(evaluator: Evaluator, value: Any, feedback: Any, scores: Any) -> Verdict:
    if feedback is None and not scores and evaluator.value_type == "pass_fail":
        if value == 1 and not isinstance(value, bool):  # the common verdicts, shared
            return PASSED
        if value == 0 and not isinstance(value, bool):
            return FAILED
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ContractError(f"evaluator {evaluator.criterion!r} sent a verdict without a value")
    if evaluator.value_type == "pass_fail":
        if value not in (0, 1):
            raise ContractError(f"evaluator {evaluator.criterion!r} sent {value!r} for a pass/fail")
        checked = float(value)
    else:
        checked = evaluator.check_score(value)
    if feedback is not None and (not isinstance(feedback, str) or text_problem(feedback)):
        raise ContractError(f"evaluator {evaluator.criterion!r} sent feedback that is not text")
    if not isinstance(scores, list) or not all(
        isinstance(pair, list)
        and len(pair) == 2
        and isinstance(pair[0], str)
        and pair[0]
        and not text_problem(pair[0])
        for pair in scores
    ):
        raise ContractError(f"evaluator {evaluator.criterion!r} sent sub-scores without names")
    subs = {name: evaluator.check_score(sub, name) for name, sub in scores}
    return Verdict(value=checked, feedback=feedback, scores=subs)


def _malformed(message: Any) -> Verdict:
    shown = repr(message)
    return Verdict.failed_to_judge(
        "ProtocolError: the evaluator's process sent a malformed verdict "
        f"({shown[:200]}{'…' if len(shown) > 200 else ''})"
    )
