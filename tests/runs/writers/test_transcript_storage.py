"""Case transcripts in the store: written compressed beside the case rows, once per case
(a chunk recorded again keeps the first), read back whole for the case page, and gone
with their run. Run on SQLite by default and on PostgreSQL with DATABASE_URL set."""

from __future__ import annotations

import pytest

import oloproof_core as engine
from oloproof_core.cases.transcript import Transcript
from oloproof_core.evaluation.aggregate import aggregate
from oloproof_core.judging.evaluators import ToolUsed
from runs.models import CaseTranscript
from runs.selectors.transcripts import case_transcript
from runs.writers.recording import chunk_cases_record, run_delete, run_record

pytestmark = pytest.mark.django_db


def _trace(tool: str, text: str = "found it") -> Transcript:
    return Transcript(
        steps=[
            {"kind": "message", "by": "gateway", "call": 1, "role": "user", "text": "où est ☃?"},
            {"kind": "model_call", "by": "gateway", "call": 1, "role": "assistant", "text": "",
             "latency_ms": 12.5, "input_tokens": 10, "output_tokens": 5, "cost_usd": 2e-05,
             "tool_calls": [{"id": "c1", "name": tool, "arguments": "{oops",
                             "arguments_not_json": True}]},
            {"kind": "tool_result", "by": "gateway", "call": 2, "role": "tool",
             "tool_call_id": "c1", "name": tool, "text": text * 2000},
            {"kind": "system_step", "by": "system", "name": "checked", "data": {"ok": True}},
        ],
        cuts=["step 3: its text was cut by 5 characters"],
        flags=["call 1: the arguments of tool call 'search' are not JSON"],
    )  # fmt: skip


def _case(trace: Transcript) -> engine.CaseResult:
    return engine.CaseResult(id="with", input={"q": 1}, expected=None, output="a", trace=trace)


def _result() -> engine.Result:
    used = ToolUsed(criterion="searched", tool="search")
    cases = [_case(_trace("search")), engine.CaseResult(id="without", input={}, expected=None)]
    for case in cases:
        case.verdicts["searched"] = engine.Verdict(value=1.0)
    provenance = {
        "system": {"name": "agent", "version": "1"},
        "dataset": {"source": "agent.jsonl", "digest": "agent-2"},
        "evaluators": [used.describe()],
        "confidence": 0.95,
    }
    return engine.Result(metrics=aggregate(cases, [used], 0.95), cases=cases, provenance=provenance)


def test_a_transcript_is_kept_compressed_and_read_back_whole() -> None:
    result = _result()
    run = run_record(result=result)
    row = CaseTranscript.objects.get(run=run, case_id="with")
    kept = _trace("search")
    assert (row.digest, row.steps, row.model_calls, row.cut) == (kept.digest(), 4, 1, True)
    assert len(bytes(row.compressed)) < len(engine.canonical_json(kept.to_dict())) / 10
    shown = case_transcript(run=run, case_id="with")
    assert shown is not None
    assert [step["kind"] for step in shown["steps"]] == [s["kind"] for s in kept.steps]
    assert shown["steps"][2]["text"] == "found it" * 2000
    assert shown["steps"][1]["tool_calls"] == kept.steps[1]["tool_calls"]
    assert (shown["cuts"], shown["flags"]) == (kept.cuts, kept.flags)
    assert [step["label"] for step in shown["steps"]] == [
        "message", "model call", "tool result", "system's own step"
    ]  # fmt: skip
    assert shown["own_steps"] == 1
    assert case_transcript(run=run, case_id="without") is None


def test_a_chunk_recorded_again_keeps_the_first_transcript_and_deleting_the_run_drops_it() -> None:
    result = _result()
    run = run_record(result=result)
    again = [_case(_trace("lookup"))]
    chunk_cases_record(
        run_id=run.pk, cases=again, pass_fail=frozenset({"searched"}), first_position=0
    )
    assert CaseTranscript.objects.filter(run=run).count() == 1
    assert CaseTranscript.objects.get(run=run).digest == _trace("search").digest()
    run_delete(run=run)
    assert not CaseTranscript.objects.exists()
