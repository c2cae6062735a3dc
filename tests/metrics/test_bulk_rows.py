"""The bulk writer stores JSON columns as the same text Django's JSONField would."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import uuid

import pytest
from django.core.serializers.json import DjangoJSONEncoder

from metrics.bulk_rows import json_text

VALUES = [
    {},
    [],
    "plain",
    'Café ☕ \u0000 \ud83d\ude00 "quoted" \\ back',
    {"b": 1, "a": [1.5, -0.0, 1e300, 2**70, True, None], "nested": {"x": {"y": ["z"]}}},
    [float("nan"), float("inf")],
    {"when": dt.datetime(2026, 12, 1, 20, 0, tzinfo=dt.UTC), "d": decimal.Decimal("1.10")},
    {"id": uuid.UUID(int=7), "day": dt.date(2026, 1, 2), "span": dt.timedelta(seconds=90)},
    3,
    0.1,
    None,
    # Empty but not a container: written as themselves.
    0,
    "",
    False,
    0.0,
]


@pytest.mark.parametrize("encoder", [None, DjangoJSONEncoder])
@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_json_text_is_what_json_dumps_writes(value: object, encoder: type | None) -> None:
    try:
        expected = json.dumps(value, cls=encoder)
    except TypeError as exc:
        with pytest.raises(TypeError, match=str(exc)):
            json_text(encoder)(value)
        return
    assert json_text(encoder)(value) == expected


def test_a_circular_value_fails_as_json_dumps_does() -> None:
    looped: list[object] = []
    looped.append(looped)
    with pytest.raises(ValueError, match="Circular reference"):
        json_text(DjangoJSONEncoder)(looped)


@pytest.mark.parametrize(
    "ids", [["a", "b", "c"], ["a", "b", "a", "c", "b"], [], ["x", "x"]], ids=str
)
def test_numbered_first_of_each_keeps_the_first_of_a_repeated_key_and_its_number(
    ids: list[str],
) -> None:
    from metrics.batching import numbered_first_of_each

    seen: set[str] = set()
    expected = []
    for number, key in enumerate(ids, start=10):
        if key not in seen:
            seen.add(key)
            expected.append((number, key))
    assert list(numbered_first_of_each(ids, key=str, start=10)) == expected
