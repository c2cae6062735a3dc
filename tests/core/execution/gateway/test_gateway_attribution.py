"""Which case a call belongs to, and that the run's totals are exact whatever the attribution."""

from __future__ import annotations

import threading

import httpx
import pytest

from oloproof_core.execution.gateway import GatewayKeyError
from oloproof_core.execution.gateway._keys import (
    AFTER_ITS_CASE,
    BETWEEN_CASES,
    CASE_ENDED,
    GATEWAY_STOPPED,
    NEVER_BOUND,
    RUN_ENDED,
)
from tests.core.execution.gateway.conftest import cost
from tests.support.fake_openai import Reply

BODY = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}


def post(gateway, key, headers=None):
    response = httpx.post(
        f"{gateway.base_url}/chat/completions",
        json=BODY,
        headers={"Authorization": f"Bearer {key}", **(headers or {})},
    )
    response.raise_for_status()
    return response.json()


def test_bound_keys_used_from_several_threads_keep_their_cases_apart(gateway, provider):
    provider.default = Reply("ok", 10, 5, delay_s=0.01)
    keys = {f"case-{i}": gateway.issue_key("system", f"worker-{i}") for i in range(4)}
    for case_id, key in keys.items():
        gateway.bind(key, case_id)

    def worker(key):
        with httpx.Client(headers={"Authorization": f"Bearer {key}"}) as client:
            for _ in range(5):
                client.post(f"{gateway.base_url}/chat/completions", json=BODY).raise_for_status()

    threads = [threading.Thread(target=worker, args=(key,)) for key in keys.values()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    for i, case_id in enumerate(keys):
        calls = gateway.take_calls(case_id)
        assert len(calls) == 5
        assert {call.key_label for call in calls} == {f"worker-{i}"}
    totals = gateway.totals()["system"]
    assert (totals.calls, totals.input_tokens, totals.output_tokens) == (20, 200, 100)
    assert totals.cost_usd == pytest.approx(20 * cost(10, 5))


def test_rebinding_moves_later_calls_to_the_new_case(gateway, key):
    post(gateway, key)
    gateway.bind(key, "case-2")
    post(gateway, key)
    gateway.unbind(key)
    post(gateway, key)

    assert [call.case_id for call in gateway.calls()] == ["case-1", "case-2", None]


def test_nothing_a_request_says_names_its_case(gateway, key):
    other = gateway.issue_key("system", "worker-2")
    gateway.bind(other, "case-9")
    post(gateway, key, {"X-Oloproof-Case": "case-9", "OpenAI-Organization": "case-9"})

    assert [call.case_id for call in gateway.calls()] == ["case-1"]


def test_a_cases_own_key_charges_that_case_and_no_later_one(gateway):
    key = gateway.issue_key("system", "worker-1")
    post(gateway, key)  # before any case
    first = gateway.bind(key, "case-a")
    post(gateway, first)
    post(gateway, key)
    second = gateway.bind(key, "case-b")
    post(gateway, first)  # a thread case-a left running, or a client made during it
    post(gateway, second)
    post(gateway, key)
    gateway.unbind(key, "case-b")
    post(gateway, key)
    post(gateway, second)

    assert [(call.case_id, call.unattributed_reason) for call in gateway.calls()] == [
        (None, NEVER_BOUND),
        ("case-a", None),
        ("case-a", None),
        (None, AFTER_ITS_CASE),
        ("case-b", None),
        ("case-b", None),
        (None, BETWEEN_CASES),
        (None, AFTER_ITS_CASE),
    ]
    assert {call.key_label for call in gateway.calls()} == {"worker-1"}
    assert gateway.totals()["system"].calls == 8


def test_a_case_key_stays_its_process_keys_role_and_is_revoked_with_it(gateway):
    key = gateway.issue_key("judge", "judge-1")
    case_key = gateway.bind(key, "case-a")
    post(gateway, case_key)
    gateway.revoke_key(key)

    refused = httpx.post(
        f"{gateway.base_url}/chat/completions",
        json=BODY,
        headers={"Authorization": f"Bearer {case_key}"},
    )

    assert refused.status_code == 401
    assert [(call.role, call.case_id) for call in gateway.calls()] == [("judge", "case-a")]


def _open_stream(gateway, key, seen):
    """Read a held stream's first event in a thread, then whatever else arrives."""

    def read():
        body = {**BODY, "stream": True}
        headers = {"Authorization": f"Bearer {key}"}
        try:
            with httpx.stream(
                "POST", f"{gateway.base_url}/chat/completions", json=body, headers=headers
            ) as response:
                for line in response.iter_lines():
                    if line:
                        seen.append(line)
        except httpx.HTTPError as exc:
            seen.append(type(exc).__name__)
        seen.append("ended")

    reader = threading.Thread(target=read)
    reader.start()
    return reader


def _wait_for(predicate, limit=200):
    """Until `predicate()` holds; a test whose stream never comes fails, not hangs."""
    event = threading.Event()
    for _ in range(limit):
        if predicate():
            return
        event.wait(0.05)
    raise AssertionError("the streams never got that far")


def test_a_stream_still_open_when_its_case_ends_is_cut_and_metered(gateway, provider, key):
    hold = threading.Event()
    provider.default = Reply("one two three", 10, 5, hold=hold)
    seen: list[str] = []
    reader = _open_stream(gateway, key, seen)
    _wait_for(lambda: len(seen) >= 2)  # the role chunk and the first word

    gateway.unbind(key, "case-1")

    [call] = gateway.take_calls("case-1")  # in the ledger by the time unbind returns
    reader.join()
    hold.set()
    assert (call.case_id, call.cut_reason, call.streamed, call.status) == (
        "case-1",
        CASE_ENDED,
        True,
        200,
    )
    assert (call.input_tokens, call.cost_usd) == (None, None)
    assert call.unmeasured_reason.startswith("it was cut before the provider reported usage")
    assert seen[-1] == "ended"
    assert "data: [DONE]" not in seen
    assert gateway.totals()["system"].calls == 1


def test_a_stream_cut_after_its_usage_arrived_keeps_its_usage(gateway, provider, key):
    hold = threading.Event()
    # Held before its closing event only: the usage has passed through (the client
    # does not see it: it did not ask for it).
    provider.default = Reply("one", 10, 5, hold=hold, hold_after=4)
    seen: list[str] = []
    reader = _open_stream(gateway, key, seen)
    _wait_for(lambda: len(seen) >= 3)  # the role chunk, the word, its finish

    gateway.unbind(key, "case-1")

    [call] = gateway.take_calls("case-1")
    reader.join()
    hold.set()
    assert call.cut_reason == CASE_ENDED
    assert (call.input_tokens, call.output_tokens) == (10, 5)
    assert call.cost_usd == pytest.approx(cost(10, 5))


def test_calls_open_at_the_end_are_cut_and_none_is_lost(gateway, provider):
    hold = threading.Event()
    provider.default = Reply("one two", 10, 5, hold=hold)
    key = gateway.issue_key("system", "worker-1")
    gateway.bind(key, "case-1")
    gateway.unbind(key, "case-1")
    seen: list[list[str]] = [[], [], []]
    readers = [_open_stream(gateway, key, seen[i]) for i in range(2)]
    _wait_for(lambda: len(seen[0]) >= 2 and len(seen[1]) >= 2)

    gateway.cut_open_calls()  # the run's end
    readers.append(_open_stream(gateway, key, seen[2]))  # one more, after the run's end
    _wait_for(lambda: len(seen[2]) >= 2)
    gateway.stop()

    for reader in readers:
        reader.join()
    hold.set()
    calls = gateway.take_unattributed()
    assert sorted(call.cut_reason for call in calls) == sorted(
        [RUN_ENDED, RUN_ENDED, GATEWAY_STOPPED]
    )
    assert {call.unattributed_reason for call in calls} == {BETWEEN_CASES}
    assert gateway.totals()["system"].calls == 3


def test_a_whole_reply_still_awaited_when_its_case_ends_is_cut(gateway, provider, key):
    provider.default = Reply("late", 10, 5, delay_s=2)
    outcome: list[object] = []
    caller = threading.Thread(target=lambda: outcome.append(_post_for_outcome(gateway, key)))
    caller.start()
    _wait_for(lambda: provider.request_count == 1)

    gateway.unbind(key, "case-1")

    [call] = gateway.take_calls("case-1")
    caller.join()
    assert (call.cut_reason, call.status, call.cost_usd) == (CASE_ENDED, 0, None)
    assert outcome == ["RemoteProtocolError"]


def _post_for_outcome(gateway, key):
    try:
        return post(gateway, key)
    except httpx.HTTPError as exc:
        return type(exc).__name__


def test_taking_calls_never_reduces_the_totals(gateway, key):
    post(gateway, key)
    post(gateway, key)
    judge_key = gateway.issue_key("judge", "judge")
    post(gateway, judge_key)

    assert len(gateway.take_calls("case-1")) == 2
    assert gateway.take_calls("case-1") == []
    totals = gateway.totals()
    assert (totals["system"].calls, totals["judge"].calls) == (2, 1)
    assert [call.role for call in gateway.calls()] == ["judge"]


def test_a_call_made_under_a_role_is_that_roles_whatever_model_it_asks_for(gateway):
    judge_key = gateway.issue_key("judge", "judge")
    post(gateway, judge_key)

    [call] = gateway.calls()
    assert call.role == "judge"
    assert "system" not in gateway.totals()


def test_keys_the_gateway_never_issued_cannot_be_bound(gateway):
    with pytest.raises(GatewayKeyError):
        gateway.bind("olo-gw-made-up", "case-1")
    with pytest.raises(ValueError, match="unknown model role"):
        gateway.issue_key("admin", "x")
