"""A system's error that says it read the dataset's row where it receives the row's input.

The API page warns of one mistake first: a system receives a row's `input` itself, so
`case["input"]["question"]` raises `KeyError: 'input'` on every case. The bare error
does not say why; after the system ran, such a case's error is given the reason and the
read that works, named from the case's own input.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from oloproof_core.cases.case import CaseError, CaseResult

_ROW_KEYS = {"'input'", "'expected'", "'id'", "'split'", "'cluster'"}


def explain_row_reads(cases: Iterable[CaseResult]) -> None:
    """Add to each case's `KeyError: 'input'` (or another row key its input lacks) the
    reason: the system receives the row's input, not the row."""
    for case in cases:
        error = case.error
        if error is None or error.type != "KeyError" or error.message not in _ROW_KEYS:
            continue
        key = error.message.strip("'")
        if not isinstance(case.input, Mapping) or key in case.input:
            continue
        case.error = CaseError(
            error.type, error.message + _reason(key, case.input), error.traceback
        )


def _reason(key: str, given: Mapping[str, Any]) -> str:
    names = [name for name in given if isinstance(name, str)]
    shown = ", ".join(repr(name) for name in names[:8]) + (", …" if len(names) > 8 else "")
    keys = f"this case's input has the keys {shown}" if names else "this case's input is empty"
    if key == "input":
        example = f"case[{names[0]!r}], not case['input'][{names[0]!r}]" if names else ""
        read = f": read {example}" if example else ""
        return f" — a system receives the row's input itself, not the row{read} ({keys})"
    if key == "expected":
        return (
            " — a system never receives the row's expected value (evaluators compare it "
            f"with the output); it receives the row's input ({keys})"
        )
    return (
        f" — a system receives the row's input, not the row, so the row's {key!r} is not "
        f"in it ({keys}); current_case().{key} gives it"
        if key == "id"
        else f" — a system receives the row's input, not the row ({keys})"
    )
