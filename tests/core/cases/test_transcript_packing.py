"""A transcript packed once, when its case is filed: what the store writes and the digest
the verdict cache keys on, the same as computed afresh."""

from __future__ import annotations

import json
import pickle
import zlib

from oloproof_core._util.canonical import canonical_json
from oloproof_core.cases.transcript import Transcript


def _transcript() -> Transcript:
    return Transcript(
        steps=[
            {"kind": "message", "by": "gateway", "call": 1, "role": "user", "text": "où? ☃"},
            {"kind": "model_call", "by": "gateway", "call": 1, "role": "assistant",
             "text": "here", "latency_ms": 5.0, "cost_usd": 1e-5},
        ],
        cuts=["step 1: its text was cut by 3 characters"],
        flags=[],
    )  # fmt: skip


def test_the_packed_form_holds_the_whole_transcript_and_its_content_digest() -> None:
    transcript = _transcript()
    packed = transcript.packed()
    kept = json.loads(zlib.decompress(packed.compressed).decode("utf-8"))
    assert kept == transcript.to_dict()
    assert packed.digest == _transcript().digest()
    assert transcript.digest() == packed.digest
    assert transcript.packed() is packed  # made once


def test_adding_a_step_makes_it_again_and_a_pickle_carries_it() -> None:
    transcript = _transcript()
    before = transcript.packed()
    transcript.add_system_step("checked", {"ok": True})
    after = transcript.packed()
    assert after is not before
    assert after.digest != before.digest
    assert json.loads(zlib.decompress(after.compressed))["steps"][-1]["name"] == "checked"
    transcript.leave_out(2)
    assert transcript.packed().digest != after.digest
    travelled = pickle.loads(pickle.dumps(transcript))
    assert travelled.packed() == transcript.packed()
    assert (travelled.packed().steps, travelled.packed().model_calls) == (3, 1)
    assert travelled == transcript


def test_figures_do_not_move_the_digest_but_are_kept() -> None:
    fast, slow = _transcript(), _transcript()
    slow.steps[1]["latency_ms"] = 900.0
    assert fast.packed().digest == slow.packed().digest
    assert fast.packed().compressed != slow.packed().compressed
    assert canonical_json(slow.to_dict()) == zlib.decompress(slow.packed().compressed).decode()
