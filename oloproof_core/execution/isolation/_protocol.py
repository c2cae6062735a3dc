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
then one `[seq, status, payload, artifacts, model_calls, own_steps, workspace]` list per
case, `status` being "ok" (payload: the output) or "error" (payload: `[type, message,
traceback]`), `own_steps` the steps the system added to its transcript itself
(`{"steps": [...], "left_out": n}`, or null), `workspace` the case's workspace as the
system left it (`cases.workspace_pack`), or null (absent from an error's reply).

The parent reads a system's frames with a cap (`FrameReader(limit=...)`, the sandbox's
reply cap): a larger frame that starts as a case's reply (`[seq,`) comes out as
`Oversized(seq, size)` and the rest of it is read past without being kept, so its
case is lost and the process goes on; any other frame over the cap is a
`ProtocolError`.
"""

from __future__ import annotations

import json
import re
import struct
from typing import Any

from oloproof_core._util.json_text import json_encoder
from oloproof_core.errors import OloproofError

_HEADER = struct.Struct("!I")
MAX_FRAME_BYTES = 256 * 1024 * 1024
"""A child cannot make the parent buffer more than this for one message."""

_ENCODE = json_encoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_DECODE = json.JSONDecoder().decode


class ProtocolError(OloproofError):
    """A system's process sent something that is not a well-formed message."""


class Oversized:
    """A case's reply larger than the reader's cap: its case and size, not its bytes."""

    __slots__ = ("seq", "size")

    def __init__(self, seq: int, size: int) -> None:
        self.seq = seq
        self.size = size

    def __repr__(self) -> str:
        return f"Oversized(seq={self.seq}, size={self.size})"


_SEQ_PEEK = 24
_SEQ = re.compile(rb"\[(\d{1,20}),")


def frame(message: Any) -> bytes:
    """Encode one message; raises TypeError/ValueError if it is not JSON data."""
    data = _ENCODE(message).encode("utf-8")
    return _HEADER.pack(len(data)) + data


class FrameReader:
    """Reassembles frames from the bytes a pipe delivers, in order; `limit`: the largest
    frame kept (see the module docstring)."""

    __slots__ = ("_buffer", "_limit", "_skip")

    def __init__(self, limit: int = MAX_FRAME_BYTES) -> None:
        self._buffer = bytearray()
        self._limit = limit
        self._skip = 0

    def feed(self, data: bytes) -> list[Any]:
        """Add bytes just read; return every message they complete."""
        if self._skip:  # the rest of an oversized frame: read past, never kept
            if len(data) <= self._skip:
                self._skip -= len(data)
                return []
            data, self._skip = data[self._skip :], 0
        buffer = self._buffer
        buffer += data
        messages: list[Any] = []
        start = 0
        end = len(buffer)
        while end - start >= 4:
            (size,) = _HEADER.unpack_from(buffer, start)
            if size > self._limit:
                if end - start - 4 < min(size, _SEQ_PEEK):
                    break
                messages.append(self._oversized(buffer, start, size))
                if end - start - 4 >= size:
                    start += 4 + size
                    continue
                self._skip = size - (end - start - 4)
                start = end
                break
            if end - start - 4 < size:
                break
            with memoryview(buffer) as view:
                try:
                    text = str(view[start + 4 : start + 4 + size], "utf-8")
                except UnicodeDecodeError as exc:
                    raise ProtocolError(f"a message is not UTF-8 ({exc})") from None
            start += 4 + size
            try:
                messages.append(_DECODE(text))
            except (ValueError, RecursionError) as exc:
                raise ProtocolError(f"a message is not JSON ({exc})") from None
        if start:
            del buffer[:start]
        return messages

    def _oversized(self, buffer: bytearray, start: int, size: int) -> Oversized:
        match = _SEQ.match(buffer, start + 4, start + 4 + _SEQ_PEEK)
        if match is None:
            raise ProtocolError(f"a message of {size} bytes is over the {self._limit} byte limit")
        return Oversized(int(match.group(1)), size)

    @property
    def pending(self) -> bool:
        """Whether part of a message arrived and the rest did not (yet)."""
        return bool(self._buffer) or self._skip > 0

    @property
    def partial(self) -> bool:
        """Whether the first bytes of a message are held, waiting for the rest."""
        return bool(self._buffer)
