"""Source digests: what makes an evaluator's version change when its code changes."""

from __future__ import annotations

import inspect
import marshal
import os
import threading
from typing import Any

from oloproof_core._util.canonical import digest_bytes, digest_file, digest_text

_lock = threading.Lock()
_file_digests: dict[tuple[str, int, int], str] = {}


def source_location(obj: Any) -> str | None:
    """The file that defines `obj`, if it has one on disk."""
    try:
        path = inspect.getsourcefile(obj)
    except TypeError:
        return None
    if path is None or not os.path.exists(path):
        return None
    return os.path.abspath(path)


def source_digest(obj: Any) -> str:
    """Digest of the whole file defining `obj`; of its own source or bytecode as a fallback.

    Keyed on the file's size and modification time so a long-lived process (a worker,
    a notebook) still notices an edit.
    """
    path = source_location(obj)
    if path is not None:
        return file_content_digest(path)
    try:
        return digest_text(inspect.getsource(obj))
    except (OSError, TypeError):
        code = getattr(obj, "__code__", None)
        if code is not None:
            return digest_bytes(marshal.dumps(code))
        return digest_text(repr(obj))


def file_content_digest(path: str) -> str:
    stat = os.stat(path)
    key = (path, stat.st_mtime_ns, stat.st_size)
    with _lock:
        digest = _file_digests.get(key)
    if digest is None:
        digest = digest_file(path)
        with _lock:
            _file_digests[key] = digest
    return digest
