"""An inline word diff of two outputs, escaped for the page.

difflib's matcher over word and punctuation tokens; each piece of text is escaped
before it is wrapped in `<del>` / `<ins>`, so an output can never add markup. Very
long outputs are diffed on their first `DIFF_TOKENS` tokens (the matcher's time
grows with the product of the lengths) and say so.
"""

from __future__ import annotations

import json
import re
from difflib import SequenceMatcher
from typing import Any

from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeString, mark_safe

DIFF_TOKENS = 2000
_TOKENS = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)


def output_text(value: Any) -> str:
    """An output as one line of text: a string as it is, anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def inline_diff(before: str, after: str) -> SafeString:
    """`after` with the words `before` had and it lacks struck out and its new ones marked."""
    old, new = _TOKENS.findall(before), _TOKENS.findall(after)
    cut = len(old) > DIFF_TOKENS or len(new) > DIFF_TOKENS
    old, new = old[:DIFF_TOKENS], new[:DIFF_TOKENS]
    pieces = []
    matcher = SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            pieces.append(conditional_escape("".join(new[j1:j2])))
            continue
        if i2 > i1:
            pieces.append(format_html("<del>{}</del>", "".join(old[i1:i2])))
        if j2 > j1:
            pieces.append(format_html("<ins>{}</ins>", "".join(new[j1:j2])))
    if cut:
        pieces.append(
            format_html(
                ' <span class="muted small">(diff of the first {} words)</span>', DIFF_TOKENS
            )
        )
    # Every piece above is escaped or built by format_html.
    return mark_safe("".join(str(piece) for piece in pieces))
