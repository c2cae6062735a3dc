"""The wire between the parent and a system's process: length-prefixed JSON frames.

JSON rather than pickle in both directions: the parent must never unpickle what a
child sends (unpickling runs code, and the child runs the code under test), and a
case's input and output are JSON data anyway. A frame is a 4-byte big-endian length
and that many bytes of UTF-8 JSON; one raw `os.read` may deliver several frames or
part of one, which `FrameReader` reassembles.

Messages, parent to child: the setup mapping, then one `[seq, case_id, input]` list
per case (with a fourth element, a release's key, after a `{"bind": ...}` message:
see `_bindings`); closing the pipe asks the child to stop. Child to parent:
`{"ready": ...}` or `{"failed": traceback}` once warm, `{"bound": key}` after a bind,
then one `[seq, status, payload, artifacts, model_calls]` list per case, `status`
being "ok" (payload: the output) or "error" (payload: `[type, message, traceback]`).
"""

from __future__ import annotations

import json
import struct
from typing import Any

from oloproof_core._json_text import json_encoder
from oloproof_core.errors import OloproofError

_HEADER = struct.Struct("!I")
MAX_FRAME_BYTES = 256 * 1024 * 1024
"""A child cannot make the parent buffer more than this for one message."""

_ENCODE = json_encoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_DECODE = json.JSONDecoder().decode


class ProtocolError(OloproofError):
    """A system's process sent something that is not a well-formed message."""


def frame(message: Any) -> bytes:
    """Encode one message; raises TypeError/ValueError if it is not JSON data."""
    data = _ENCODE(message).encode("utf-8")
    return _HEADER.pack(len(data)) + data


class FrameReader:
    """Reassembles frames from the bytes a pipe delivers, in order."""

    __slots__ = ("_buffer",)

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[Any]:
        """Add bytes just read; return every message they complete."""
        buffer = self._buffer
        buffer += data
        messages: list[Any] = []
        start = 0
        end = len(buffer)
        while end - start >= 4:
            (size,) = _HEADER.unpack_from(buffer, start)
            if size > MAX_FRAME_BYTES:
                raise ProtocolError(
                    f"a message of {size} bytes is over the {MAX_FRAME_BYTES} byte limit"
                )
            if end - start - 4 < size:
                break
            body = bytes(buffer[start + 4 : start + 4 + size])
            start += 4 + size
            try:
                messages.append(_DECODE(body.decode("utf-8")))
            except (ValueError, RecursionError) as exc:
                raise ProtocolError(f"a message is not JSON ({exc})") from None
        if start:
            del buffer[:start]
        return messages

    @property
    def pending(self) -> bool:
        """Whether part of a message arrived and the rest did not (yet)."""
        return bool(self._buffer)
