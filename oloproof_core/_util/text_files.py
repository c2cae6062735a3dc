"""The files people give oloproof, read as text: UTF-8, or an error saying what the file is.

Every text file oloproof reads (run configs, policies, result files, datasets, labels,
schemas) is UTF-8; a UTF-8 byte-order mark is allowed, as some editors on Windows write
one. A file in another encoding is refused with its name, the line and column of its
first byte that is not UTF-8, what it most likely is (UTF-16 or UTF-32 by their
byte-order marks or their NUL bytes, Latin-1/Windows-1252, or no text at all) and how
to save it as UTF-8, rather than with Python's `UnicodeDecodeError`.
"""

from __future__ import annotations

import codecs
import contextlib
import os
from collections.abc import Callable, Iterator
from typing import TextIO

from oloproof_core.errors import OloproofError

_MARKS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)
_SAMPLE = 4096
"""Bytes looked at to tell UTF-16 without a mark, Latin-1 and binary data apart."""


def read_text(
    path: str, *, error: Callable[[str], OloproofError] = OloproofError, what: str = "the file"
) -> str:
    """The UTF-8 text of the file at `path`; `error(message)` for one that cannot be read."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise error(f"{path}: cannot read {what}: {exc.strerror}") from None
    return text_of(data, source=path, error=error)


def text_of(
    data: bytes, *, source: str, error: Callable[[str], OloproofError] = OloproofError
) -> str:
    """`data` decoded as UTF-8 (a byte-order mark dropped), or `error` naming `source`."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, problem = not_utf8(data, exc.start, name=os.path.basename(source))
        raise error(f"{source}:{line}: {problem}") from None


def not_utf8(
    data: bytes, start: int, *, name: str = "FILE", head: bytes | None = None
) -> tuple[int, str]:
    """(line, what is wrong and how to fix it) for `data` (the file `name`) whose byte
    `start` is not UTF-8; `head`, its first bytes when `data` is one of its lines."""
    line = data.count(b"\n", 0, start) + 1
    column = start - (data.rfind(b"\n", 0, start) + 1) + 1
    kind, encoding = guess_encoding(data if head is None else head)
    said = f"not UTF-8 text: byte 0x{data[start]:02x} at column {column} is not UTF-8"
    if encoding is None:
        return line, f"{said}; the file holds {kind}, not text: is it the file you meant?"
    return line, (
        f"{said}; the file looks like {kind}: save it as UTF-8 (in your editor's "
        f"'save with encoding', or `iconv -f {encoding} -t UTF-8 {name} > utf8-{name}`)"
    )


def guess_encoding(data: bytes) -> tuple[str, str | None]:
    """(what `data` most likely is, its encoding's name for iconv or None for binary data)."""
    for mark, name in _MARKS:
        if data.startswith(mark):
            return f"{name} text (it starts with a {name} byte-order mark)", name
    sample = data[:_SAMPLE]
    if b"\x00" in sample:
        odd, even = sample[1::2], sample[0::2]
        if odd.count(0) > len(odd) * 0.4 and even.count(0) < len(even) * 0.1:
            return "UTF-16 text (little-endian, without a byte-order mark)", "UTF-16LE"
        if even.count(0) > len(even) * 0.4 and odd.count(0) < len(odd) * 0.1:
            return "UTF-16 text (big-endian, without a byte-order mark)", "UTF-16BE"
        return "binary data (NUL bytes)", None
    text = sample.decode("cp1252", errors="replace")
    controls = sum(1 for char in text if (char < " " and char not in "\t\r\n") or char == "\ufffd")
    if controls <= len(text) * 0.05:
        return "Latin-1 or Windows-1252 text", "WINDOWS-1252"
    return "binary data", None


@contextlib.contextmanager
def text_written(path: str | os.PathLike[str], *, what: str = "the file") -> Iterator[TextIO]:
    """`path` opened to write UTF-8 text; a folder, a missing folder or a file that may not
    be written is an OloproofError naming it, not the OSError of `open`."""
    try:
        handle = open(path, "w", encoding="utf-8", newline="")  # noqa: SIM115 (closed below)
    except OSError as exc:
        raise OloproofError(f"{os.fspath(path)}: cannot write {what}: {exc.strerror}") from None
    with handle:
        yield handle
