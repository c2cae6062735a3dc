"""A conversation's turns as calls of the system: each turn's case, and the conversation
put back together from them.

Each turn is a case of its own while it runs (`<case id>#turn<n>`), so it goes through
the same machinery a single case does: sent to the system's process, timed by this
process, its model calls metered by the gateway. The conversation's case then holds the
whole: its output the messages and every reply, its latency the turns' summed, its
model calls and transcript every turn's in order, and each turn's own figures (and the
artifacts the system attached in it) in `artifacts["turns"]`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from oloproof_core.cases.case import CaseError, CaseResult
from oloproof_core.cases.transcript import Transcript
from oloproof_core.cases.transcript_caps import STEPS_CAP
from oloproof_core.datasets.conversations import MESSAGES
from oloproof_core.errors import ContractError

REPLIES = "replies"
"""The conversation's output: `{"messages": [...], "replies": [...]}`."""
TURNS_ARTIFACT = "turns"
"""The conversation case's artifact listing each turn's figures."""


def turn_id(case_id: str, number: int) -> str:
    """The id a conversation's `number`th turn (from 1) runs under."""
    return f"{case_id}#turn{number}"


def turn_case(
    case: CaseResult, context: Mapping[str, Any], messages: Sequence[Mapping[str, str]]
) -> CaseResult:
    """The case the system is called with for the conversation's next turn: the row's
    other input keys and the messages so far, ending with the user's new message."""
    number = len(messages) // 2 + 1
    return CaseResult(
        id=turn_id(case.id, number),
        input={**context, MESSAGES: [dict(message) for message in messages]},
        expected=None,
        split=case.split,
        cluster=case.cluster,
        repeat=case.repeat,
    )


def reply_text(output: Any) -> str:
    """The text of a turn's reply, for the conversation's next messages: the output itself
    when it is a string, else its `content`."""
    if isinstance(output, str):
        return output
    if isinstance(output, Mapping) and isinstance(output.get("content"), str):
        return str(output["content"])
    shown = repr(output)
    shown = shown[:80] + ("…" if len(shown) > 80 else "")
    raise ContractError(
        "in a conversation the system returns its reply as a string, or as an object whose "
        "'content' is the reply's text (its other keys are kept), e.g. "
        f'{{"content": "Hello!", "label": "greeting"}}; it returned {type(output).__name__} '
        f"{shown}"
    )


def turn_error(number: int, error: CaseError) -> CaseError:
    """A failed turn's error as its conversation's."""
    return CaseError(error.type, f"turn {number}: {error.message}", error.traceback)


def turn_figures(turn: CaseResult) -> dict[str, Any]:
    """What the run measured of one turn (and the artifacts the system attached in it)."""
    figures: dict[str, Any] = {
        "latency_ms": turn.measurements.latency_ms,
        "cost_usd": turn.measurements.system_cost_usd,
        "model_calls": sum(call.role == "system" for call in turn.measurements.model_calls),
    }
    if turn.artifacts:
        figures["artifacts"] = turn.artifacts
    return figures


def summed_latency(turns: Sequence[CaseResult]) -> float | None:
    """The system's time over the conversation: its turns' latencies added up."""
    measured = [turn.measurements.latency_ms for turn in turns]
    if not measured or any(latency is None for latency in measured):
        return None
    return float(sum(latency for latency in measured if latency is not None))


def joined_transcript(turns: Sequence[CaseResult]) -> Transcript | None:
    """The turns' transcripts one after the other, each cut and flag naming its turn;
    steps past the cap on steps are left out, and said."""
    joined = Transcript()
    for number, turn in enumerate(turns, start=1):
        trace = turn.trace
        if trace is None:
            continue
        room = STEPS_CAP - len(joined.steps)
        joined.steps.extend(trace.steps[: max(room, 0)])
        joined.cuts.extend(f"turn {number}: {cut}" for cut in trace.cuts)
        joined.flags.extend(f"turn {number}: {flag}" for flag in trace.flags)
        if len(trace.steps) > room:
            joined.cuts.append(
                f"turn {number}: {len(trace.steps) - max(room, 0)} steps past the "
                f"conversation's first {STEPS_CAP} left out"
            )
    return joined if joined.steps or joined.cuts else None
