"""What tells a result file from other JSON by its first bytes, without reading it.

Apart from the result itself so the sandbox, which hides result files from systems,
reads this and nothing of a run's figures.
"""

from __future__ import annotations

import re

RESULT_FORMAT = "oloproof-result/1"
"""The first key of every result oloproof writes (`"format"`): what tells its files from
other JSON cheaply (`looks_like_result`), e.g. to hide them from systems."""
RESULT_HEAD_BYTES = 256
"""How much of a file's start `looks_like_result` needs."""
_MARKED = re.compile(rb'\A\s*\{\s*"format"\s*:\s*"oloproof-result/')
_UNMARKED = re.compile(
    rb'\A\s*\{\s*"run_id"\s*:\s*(?:null|"[^"\\]{0,200}"|\d{1,30})\s*,\s*"metrics"\s*:'
)


def looks_like_result(head: bytes) -> bool:
    """Whether a file starting with `head` (its first `RESULT_HEAD_BYTES` bytes) is a
    result oloproof wrote: marked, or in the shape of the files written before the mark."""
    return _MARKED.match(head) is not None or _UNMARKED.match(head) is not None
