"""JSON text from an encoder built once.

`json.dumps` and `JSONEncoder.encode` build the C encoder anew for every value. The
platform encodes each case several times (the frames to and from a system's process,
its canonical form for digests, the recorded JSON columns), so each of those places
holds one encoder from here instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

_EMPTY: dict[type, str] = {dict: "{}", list: "[]"}
"""The text of an empty object and list, whatever the separators and key order."""


def json_encoder(
    *,
    default: Callable[[Any], Any] | None = None,
    sort_keys: bool = False,
    ensure_ascii: bool = True,
    allow_nan: bool = True,
    separators: tuple[str, str] = (", ", ": "),
) -> Callable[[Any], str]:
    """`json.JSONEncoder(...).encode` with these settings, the C encoder built here once.

    The text and the errors are the encoder's own: a value that is not JSON data
    raises TypeError (or what `default` raises), NaN without `allow_nan` ValueError, a
    circular value ValueError.
    """
    python = json.JSONEncoder(
        sort_keys=sort_keys,
        ensure_ascii=ensure_ascii,
        allow_nan=allow_nan,
        separators=separators,
        default=default,
    )
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C accelerator: the pure encoder serves
        return python.encode
    quote = json.encoder.encode_basestring_ascii if ensure_ascii else json.encoder.encode_basestring
    # No circularity markers (they cost a dict entry per container): a circular value
    # recurses until RecursionError, and the pure encoder then names the problem.
    chunks = make(
        None,
        python.default,
        quote,
        None,
        separators[1],  # between a key and its value
        separators[0],  # between items
        sort_keys,
        False,
        allow_nan,
    )

    def encode(value: Any) -> str:
        if isinstance(value, str):
            return str(quote(value))
        if not value and type(value) in _EMPTY:  # no artifacts, model calls, sub-scores
            return _EMPTY[type(value)]
        try:
            return "".join(chunks(value, 0))
        except RecursionError:
            return python.encode(value)

    return encode
