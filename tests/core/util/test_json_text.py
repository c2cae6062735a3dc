"""An encoder built once writes what `json.JSONEncoder(...).encode` writes, errors included."""

from __future__ import annotations

import json

import pytest

from oloproof_core import json_encoder

SETTINGS = [
    {},
    {"sort_keys": True, "ensure_ascii": False, "allow_nan": False, "separators": (",", ":")},
    {"ensure_ascii": False, "allow_nan": False, "separators": (",", ":")},
]
VALUES = [
    {},
    [],
    'Café ☕ \u0000 \ud800 "quoted" \\ back',
    {"b": 1, "a": [1.5, -0.0, 1e300, 2**70, True, None], "é": {"x": {"y": ["z"]}}},
    [float("nan")],
    {"not json": object()},
    {"2": "b", "1": "a"},
    3,
    0.1,
    None,
]


def _outcome(encode, value):
    try:
        return encode(value)
    except (TypeError, ValueError) as exc:
        return type(exc), str(exc).split(" at 0x")[0]


@pytest.mark.parametrize("settings", SETTINGS, ids=["dumps", "canonical", "frames"])
@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_the_same_text_or_the_same_error(settings: dict, value: object) -> None:
    assert _outcome(json_encoder(**settings), value) == _outcome(
        json.JSONEncoder(**settings).encode, value
    )


def test_a_circular_value_is_named_not_a_recursion_error() -> None:
    looped: list[object] = []
    looped.append(looped)
    with pytest.raises(ValueError, match="Circular reference detected"):
        json_encoder()(looped)
