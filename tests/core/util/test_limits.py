"""What every database can store: the quick check of plain values never changes the answer."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oloproof_core import value_problem
from oloproof_core._util.limits import MAX_DEPTH, MAX_INT, _named_problem


def nested(depth: int, leaf: Any, container: str = "dict") -> Any:
    value = leaf
    for _ in range(depth):
        value = {"k": value} if container == "dict" else [value]
    return value


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"a": "x\x00y"}, "a contains a NUL character (\\u0000)"),
        ({"a": ["ok", "\ud800"]}, "a[1] contains a lone surrogate (\\ud800), which is not text"),
        ({"é\x00": 1}, "the value: a key contains a NUL character (\\u0000)"),
        ({1: "x"}, "the value: key 1 is not a string"),
        ({"n": MAX_INT + 1}, "n: the integer does not fit in 64 bits"),
        ({"n": -MAX_INT - 2}, "n: the integer does not fit in 64 bits"),
        ({"f": float("inf")}, "f is inf; NaN and Infinity are not JSON numbers"),
        ({"s": {1, 2}}, "s is a set, which is not JSON data"),
        (OrderedDict(a=("x", "\x00")), "a[1] contains a NUL character (\\u0000)"),
        (nested(MAX_DEPTH + 1, 1), "k" + ".k" * MAX_DEPTH + ": nested deeper than 64 levels"),
    ],
)
def test_each_refusal_names_where(value: Any, problem: str) -> None:
    assert value_problem(value) == problem


@pytest.mark.parametrize(
    "value",
    [
        nested(MAX_DEPTH, "leaf"),
        nested(MAX_DEPTH, "leaf", "list"),
        {"n": MAX_INT, "m": -MAX_INT - 1, "t": True, "z": None, "f": -0.0},
        {"text": "çok güzel ünicode 😀", "tuple": (1, 2), "ordered": OrderedDict(a=1)},
    ],
)
def test_storable_values_pass(value: Any) -> None:
    assert value_problem(value) is None


def test_numbers_unchecked_when_the_caller_checks_them() -> None:
    assert value_problem({"f": float("nan"), "n": 2**80}, numbers=False) is None
    assert value_problem({"f": float("nan"), "s": "\x00"}, numbers=False) is not None


leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(alphabet=st.characters(codec=None), max_size=6),
    st.sampled_from(["\x00", "\udc80", "a\ud83d", MAX_INT + 1, -MAX_INT - 2, MAX_INT]),
)
values = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.tuples(children, children),
        st.dictionaries(
            st.one_of(st.text(max_size=4), st.integers(), st.sampled_from(["\x00", "\udfff"])),
            children,
            max_size=4,
        ),
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(value=values, numbers=st.booleans())
def test_the_quick_check_agrees_with_the_named_one(value: Any, numbers: bool) -> None:
    assert value_problem(value, "x", numbers=numbers) == _named_problem(value, "x", numbers)
