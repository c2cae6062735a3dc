"""Conversation rows: scripted turns or a simulated user's scenario, checked as they load,
a malformed one refused with its file, its line and the form that works."""

from __future__ import annotations

import json

import pytest

from oloproof import DatasetError
from oloproof_core.datasets.conversations import DEFAULT_MAX_TURNS, conversation_of
from oloproof_core.datasets.dataset import load_dataset
from oloproof_core.datasets.file import check_dataset_file


def user(text: str) -> dict:
    return {"role": "user", "content": text}


SCRIPTED = {
    "id": "refund",
    "input": {"turns": [user("Hi"), user("I want a refund")], "channel": "chat"},
    "expected": {"turns": [{"label": "greeting"}, None], "resolved": True},
}
SCENARIO = {"id": "lamp", "input": {"scenario": "Your lamp arrived broken.", "max_turns": 3}}


def write_rows(path, rows) -> str:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return str(path)


def test_scripted_and_simulated_conversations_load_as_plans(tmp_path):
    plain = {"id": "plain", "input": {"question": "What is a turn?"}}
    default_turns = {"id": "chair", "input": {"scenario": "You want a chair."}}
    data = load_dataset(
        write_rows(tmp_path / "d.jsonl", [SCRIPTED, SCENARIO, default_turns, plain])
    )

    scripted, simulated, defaulted, single = (
        conversation_of(row.input, row.expected) for row in data.rows
    )
    assert scripted is not None
    assert scripted.scripted == ("Hi", "I want a refund")
    assert (scripted.scenario, scripted.max_turns) == (None, 2)
    assert scripted.context == {"channel": "chat"}
    assert scripted.expected_turns == ({"label": "greeting"}, None)
    assert simulated is not None
    assert (simulated.scripted, simulated.scenario) == ((), "Your lamp arrived broken.")
    assert (simulated.max_turns, simulated.expected_turns) == (3, None)
    assert defaulted is not None
    assert defaulted.max_turns == DEFAULT_MAX_TURNS
    assert single is None


BAD_ROWS = [
    ({"turns": []}, None, "'input.turns' is empty: a conversation needs at least one user message"),
    ({"turns": "Hi"}, None, "'input.turns' must be a list of the user's messages"),
    ({"turns": ["Hi"]}, None, "'input.turns[0]' must be an object with exactly \"role\" and"),
    ({"turns": [{"role": "user"}]}, None, "'input.turns[0]' must be an object with exactly"),
    ({"turns": [user("Hi"), {"role": "assistant", "content": "Hello"}]}, None,
     "'input.turns[1]' has the role 'assistant'; 'turns' lists the user's messages"),
    ({"turns": [user("  ")]}, None, "'input.turns[0]': 'content' must be the user's message"),
    ({"turns": [user("Hi")] * 51}, None, "holds 51 messages; a conversation has at most 50"),
    ({"turns": [user("Hi")], "scenario": "x"}, None, "holds both 'turns'"),
    ({"turns": [user("Hi")], "messages": []}, None, "'input.messages' is what the system receives"),
    ({"turns": [user("Hi")]}, {"turns": [{}, {}]}, "'expected.turns' must be a list of 1 items"),
    ({"turns": [user("Hi")]}, {"turns": ["greeting"]}, "'expected.turns[0]' must be an object"),
    ({"scenario": ""}, None, "'input.scenario' must be a non-empty string"),
    ({"scenario": "x", "max_turns": 0}, None, "'input.max_turns' must be a whole number from 1"),
    ({"scenario": "x", "max_turns": "3"}, None, "'input.max_turns' must be a whole number"),
    ({"scenario": "x", "max_turns": 2.5}, None, "'input.max_turns' must be a whole number"),
    ({"scenario": "x", "max_turns": True}, None, "'input.max_turns' must be a whole number"),
    ({"scenario": "x", "max_turns": 51}, None, "'input.max_turns' must be a whole number"),
    ({"scenario": "x"}, {"turns": [{}]}, "a simulated user's turns are not known in advance"),
    ({"max_turns": 3}, None, "'input.max_turns' belongs to a simulated user's conversation"),
]  # fmt: skip


@pytest.mark.parametrize(("given", "expected", "problem"), BAD_ROWS)
def test_a_malformed_conversation_is_refused_naming_the_file_and_line(
    tmp_path, given, expected, problem
):
    bad = {"id": "bad", "input": given, **({"expected": expected} if expected else {})}
    path = write_rows(tmp_path / "d.jsonl", [SCRIPTED, bad])

    with pytest.raises(DatasetError) as raised:
        load_dataset(path)

    assert (raised.value.source, raised.value.line) == (path, 2)
    assert str(raised.value).startswith(f"{path}:2: row 'bad': ")
    assert problem in str(raised.value)


def test_a_submitted_dataset_file_is_checked_the_same_way(tmp_path):
    bad = {"id": "bad", "input": {"scenario": "x", "max_turns": -1}}
    path = write_rows(tmp_path / "d.jsonl", [SCENARIO, bad])

    with pytest.raises(DatasetError, match=r"d\.jsonl:2: row 'bad': 'input\.max_turns'"):
        check_dataset_file(path)
