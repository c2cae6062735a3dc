"""Which case a model call is charged to is decided by the parent, never by the system.

Real system processes in their sandbox call the local OpenAI-compatible server through
the run's gateway; each test is a way a system's calls used to land on the wrong case,
or on none.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from oloproof import evaluate
from oloproof.evaluators import Contains
from oloproof_core import InMemoryStore
from tests.core.execution.isolation import attribution_systems as systems
from tests.support.fake_openai import FakeOpenAI, Reply

PER_CALL = (10 * 1 + 5 * 2) / 1e6
"""Cost of one call at the fake server's usage (10 in, 5 out) and $1 / $2 per million."""


def rows(count: int) -> list[dict[str, object]]:
    return [{"id": f"q{i}", "input": {"question": f"question {i}"}} for i in range(count)]


def run(target, data, **options):
    return evaluate(
        target,
        data,
        [Contains(criterion="answered", value="a")],
        store=InMemoryStore(),
        record=False,
        **options,
    )


def system_calls(case):
    return [call for call in case.measurements.model_calls if call.role == "system"]


def unattributed(result) -> int:
    figures = result.provenance["execution"].get("unattributed_model_calls") or {}
    return figures.get("system", {}).get("calls", 0)


@pytest.fixture
def hold() -> Iterator[threading.Event]:
    """Holds the fake server's streams open until the test is over."""
    event = threading.Event()
    yield event
    event.set()


@pytest.mark.parametrize("target", [systems.async_no_header, systems.async_names_one_case])
def test_an_async_systems_cases_each_get_their_own_calls_whatever_it_sends(
    models_on: FakeOpenAI, target
) -> None:
    # The calls overlap: four cases are in flight at once, each waiting on its model.
    models_on.respond_with(lambda request: Reply("an answer", delay_s=0.05))
    result = run(target, rows(4), concurrency=4)
    for case in result.cases:
        assert case.error is None, case.error
        assert len(system_calls(case)) == 1, case.id
        assert case.cost_usd == pytest.approx(PER_CALL)
    assert unattributed(result) == 0
    assert models_on.max_in_flight > 1  # they really did overlap


def test_a_stream_still_open_when_its_case_ends_is_metered(
    models_on: FakeOpenAI, hold: threading.Event
) -> None:
    models_on.respond_with(lambda request: Reply("one two three", hold=hold))
    result = run(systems.stream_left_open, rows(2), concurrency=1)
    for case in result.cases:
        assert case.error is None, case.error
        (call,) = system_calls(case)
        # The provider had sent no usage yet: the call is counted, its cost unknown.
        assert call.cost_usd is None
        assert case.cost_usd is None
    assert result.usage()["system"].calls == 2
    cut = result.provenance["execution"]["model_calls_cut"]
    assert (cut["calls"], cut["cases"], sorted(cut["ids"])) == (2, 2, ["q0", "q1"])
    assert unattributed(result) == 0


def test_a_call_a_thread_makes_after_its_case_returned_is_no_other_cases(
    models_on: FakeOpenAI,
) -> None:
    models_on.respond_with(lambda request: Reply("an answer"))
    result = run(systems.late_thread, rows(3), concurrency=1)
    first, *others = result.cases
    assert system_calls(first) == []
    for case in others:
        assert case.error is None, case.error
        assert len(system_calls(case)) == 1, case.id
        assert case.cost_usd == pytest.approx(PER_CALL)
    # The late call is the run's, counted apart: the run's total stays exact.
    assert unattributed(result) == 1
    reasons = result.provenance["execution"]["unattributed_model_call_reasons"]
    assert list(reasons.values()) == [1]
    assert "after that case had returned" in next(iter(reasons))
    assert models_on.request_count == 3
