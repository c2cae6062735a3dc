"""Which case a call belongs to, and that the run's totals are exact whatever the attribution."""

from __future__ import annotations

import threading

import httpx
import pytest

from oloproof_core.gateway import CASE_HEADER, GatewayKeyError
from tests.core.gateway.conftest import cost
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


def test_a_single_case_key_ignores_the_case_header(gateway, key):
    post(gateway, key, {CASE_HEADER: "case-9"})

    assert [call.case_id for call in gateway.calls()] == ["case-1"]


def test_a_concurrent_key_takes_only_cases_open_for_it(gateway):
    key = gateway.issue_key("system", "async-worker", concurrent=True)
    gateway.bind(key, "case-a")
    post(gateway, key)  # one open case: no header needed
    gateway.bind(key, "case-b")
    post(gateway, key, {CASE_HEADER: "case-b"})
    post(gateway, key)  # two open cases, no header: which one is unknown
    post(gateway, key, {CASE_HEADER: "someone-elses-case"})
    gateway.unbind(key, "case-b")
    post(gateway, key, {CASE_HEADER: "case-b"})

    assert [call.case_id for call in gateway.calls()] == ["case-a", "case-b", None, None, None]
    assert gateway.totals()["system"].calls == 5


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
