"""Direction controls in user strings, made visible so they cannot reorder what a page says.

A name such as "bot\\u202egpj.exe" renders as "botexe.jpg" — the right-to-left override
reverses the rest. Every HTML page the dashboard sends has these invisible controls
replaced by their code points (`BidiControlsMiddleware`), and names and ids are also
wrapped in `<bdi>` by the templates (`isolated`), so nothing spills into the text
around them.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
_SHOWN = {ord(char): f"⟨U+{ord(char):04X}⟩" for char in BIDI_CONTROLS}


def bidi_controls_shown(text: str) -> str:
    return text.translate(_SHOWN)


class BidiControlsMiddleware:
    """Shows the direction controls in every HTML response as their code points."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        kind = response.get("Content-Type", "")
        if response.streaming or not kind.startswith("text/html"):
            return response
        charset = response.charset or "utf-8"
        text = response.content.decode(charset, errors="replace")
        if any(char in text for char in BIDI_CONTROLS):
            response.content = bidi_controls_shown(text).encode(charset)
        return response
