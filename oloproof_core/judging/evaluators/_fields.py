"""Picking a field out of an output or an expected object, for the built-in evaluators."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from oloproof_core.errors import ContractError


def pick(value: Any, field: str | None, what: str) -> Any:
    """`value[field]`, with dotted paths (`answer.label`); the value itself when field is None."""
    if field is None:
        return value
    current = value
    for key in field.split("."):
        if isinstance(current, Mapping) and key in current:
            current = current[key]
        elif isinstance(current, list) and key.isdigit() and int(key) < len(current):
            current = current[int(key)]
        else:
            available = (
                ", ".join(map(repr, list(current)[:10]))
                if isinstance(current, Mapping)
                else f"a {type(current).__name__}"
            )
            raise ContractError(f"{what} has no field {field!r} (found {available})")
    return current


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)
