"""The ids a person most likely meant when the one they gave is not there (`c7` for `c07`).

Case ids are typed by hand (a labels file, a command's argument), and the common slips
are a dropped leading zero, another letter case or another separator: ids equal once
those are set aside are offered first; otherwise the nearest by `difflib`'s ratio.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

_LEADING_ZEROS = re.compile(r"(?<!\d)0+(?=\d)")
_SEPARATORS = re.compile(r"[\s_\-.:/]+")
CLOSE_IDS_COMPARED = 100_000
"""Ids compared by ratio at most: a hint must not take longer than the mistake it helps."""


def close_ids(wanted: str, ids: Iterable[str], *, n: int = 3) -> list[str]:
    """Up to `n` ids of `ids` that `wanted` most likely meant, the likeliest first."""
    key = _normal(wanted)
    candidates: list[str] = []
    same: list[str] = []
    for index, known in enumerate(ids):
        if _normal(known) == key and known != wanted:
            same.append(known)
        if index < CLOSE_IDS_COMPARED:
            candidates.append(known)
    if same:
        return sorted(same)[:n]
    return difflib.get_close_matches(wanted, candidates, n=n, cutoff=0.75)


def did_you_mean(wanted: str, ids: Iterable[str]) -> str:
    """` (did you mean 'c07'?)`, or `""` when nothing is close."""
    close = close_ids(wanted, ids)
    if not close:
        return ""
    return " (did you mean " + " or ".join(repr(item) for item in close) + "?)"


def _normal(text: str) -> str:
    return _LEADING_ZEROS.sub("", _SEPARATORS.sub("", text.casefold()))
