"""What every supported database can store: the one check of values and texts before recording.

SQLite keeps almost anything; PostgreSQL refuses a NUL character in text and in JSON,
text that is not valid Unicode (a lone surrogate), NaN and Infinity in JSON, and the
platform's columns have lengths. A value that one database would refuse is refused
here for all, with the path of the offending key, so a run never records on one and
fails on the other, and a worker never crashes mid-run on a value it cannot write.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

MAX_DEPTH = 64
"""Deepest nesting of lists and objects in recorded data (inputs, outputs, configs)."""
MAX_INT = 2**63 - 1
"""Integers are stored exactly only within 64 bits (SQLite's JSON turns larger ones into
approximate floats)."""
TEXT_LIMITS = {
    "case id": 500,
    "system name": 200,
    "version": 200,
    "split": 200,
    "cluster": 200,
    "criterion": 200,
    "metric": 300,
}
"""Lengths of the platform's text columns, by what they hold."""
MAX_RUN_CASES = 1_000_000
"""Cases one run submitted to the workers may have, unless the platform's setting says
otherwise: the size its planning, chunks and conclusion are measured at (bench/README.md,
"Scale: a million cases")."""


def run_cases_problem(n_cases: int, limit: int, setting: str) -> str | None:
    """Why a run of `n_cases` cases is refused under `limit` (named by `setting`), or None."""
    if n_cases <= limit:
        return None
    return (
        f"has {n_cases:,} cases, over the limit of {limit:,} cases in one run ({setting}); "
        f"submit a part of it (a split, or a smaller file), or ask the server's "
        f"administrator to raise {setting}"
    )


def text_problem(text: str) -> str | None:
    """Why `text` cannot be stored everywhere, or None."""
    if "\x00" in text:
        return "contains a NUL character (\\u0000)"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"contains a lone surrogate (\\u{ord(text[exc.start]):04x}), which is not text"
    return None


def storable_text(text: str) -> str:
    """Free text (an error message) as every database stores it: NUL and lone surrogates
    replaced by U+FFFD. Only for text shown to people, never for data that is scored."""
    cleaned = text.replace("\x00", "\ufffd")
    return cleaned.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def label_problem(text: str, what: str) -> str | None:
    """Why a short label (a case id, a name) cannot be stored, or None."""
    limit = TEXT_LIMITS[what]
    if len(text) > limit:
        return f"is {len(text)} characters long; a {what} has at most {limit}"
    return text_problem(text)


def value_problem(value: Any, path: str = "", *, numbers: bool = True) -> str | None:
    """Why JSON data cannot be stored everywhere, naming where (`a.b[2]`), or None.

    Iterative, so a deeply nested value is reported, never a RecursionError. With
    `numbers=False` only texts, keys and nesting are checked (for callers that check
    their numbers themselves, with line numbers).
    """
    if _plainly_storable(value, 0, numbers):
        return None
    return _named_problem(value, path, numbers)


def _plainly_storable(item: Any, depth: int, numbers: bool) -> bool:
    """True for the common value, JSON's own types all the way down and nothing to refuse.

    Every input, expected value and output passes through here, so it is checked without
    naming paths; False only means "not shown plainly" (a subclass of dict, a tuple, a
    problem), and `_named_problem` then decides and says where. Recursion is bounded by
    the depth limit.
    """
    if depth > MAX_DEPTH:
        return False
    kind = type(item)
    if kind is str:
        return "\x00" not in item and (item.isascii() or text_problem(item) is None)
    if kind is dict:
        for key, child in item.items():
            # Texts checked here, not by a call each: most of a row is keys and texts.
            if type(key) is not str or "\x00" in key or not (key.isascii() or _clean(key)):
                return False
            if type(child) is str:
                if "\x00" in child or not (child.isascii() or _clean(child)):
                    return False
            elif not _plainly_storable(child, depth + 1, numbers):
                return False
        return True
    if kind is list:
        # A loop, not all(...): a generator's frame per list doubles this check's cost.
        for child in item:  # noqa: SIM110
            if not _plainly_storable(child, depth + 1, numbers):
                return False
        return True
    if item is None or kind is bool:
        return True
    if kind is int:
        return not numbers or -MAX_INT - 1 <= item <= MAX_INT
    if kind is float:
        return not numbers or math.isfinite(item)
    return False


def _clean(text: str) -> bool:
    return text_problem(text) is None


def _named_problem(value: Any, path: str, numbers: bool) -> str | None:
    stack: list[tuple[Any, str, int]] = [(value, path, 0)]
    while stack:
        item, where, depth = stack.pop()
        shown = where or "the value"
        if depth > MAX_DEPTH:
            return f"{shown}: nested deeper than {MAX_DEPTH} levels"
        if isinstance(item, str):
            problem = text_problem(item)
            if problem:
                return f"{shown} {problem}"
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int):
            if numbers and not -MAX_INT - 1 <= item <= MAX_INT:
                return f"{shown}: the integer does not fit in 64 bits"
        elif isinstance(item, float):
            if numbers and not math.isfinite(item):
                return f"{shown} is {item!r}; NaN and Infinity are not JSON numbers"
        elif isinstance(item, Mapping):
            for key, child in item.items():
                if not isinstance(key, str):
                    return f"{shown}: key {key!r} is not a string"
                problem = text_problem(key)
                if problem:
                    return f"{shown}: a key {problem}"
                stack.append((child, f"{where}.{key}" if where else key, depth + 1))
        elif isinstance(item, (list, tuple)):
            stack.extend(
                (child, f"{where}[{index}]", depth + 1) for index, child in enumerate(item)
            )
        else:
            return f"{shown} is a {type(item).__name__}, which is not JSON data"
    return None
