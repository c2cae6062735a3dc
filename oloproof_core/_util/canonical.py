"""Canonical JSON text and content digests.

Every digest in oloproof (dataset, case parts, evaluator versions, cache keys) is a
SHA-256 over canonical JSON, so two equal values always digest the same no matter
how their keys were ordered or which process produced them.
"""

from __future__ import annotations

import hashlib
from typing import Any

from oloproof_core._util.json_text import json_encoder

# Every case is encoded at least twice, so the encoder is built once.
_CANONICAL = json_encoder(
    sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":")
)


def canonical_json(value: Any) -> str:
    """Return `value` as canonical JSON; raises TypeError/ValueError if it is not JSON data."""
    return _CANONICAL(value)


def digest_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def digest_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def digest_value(value: Any) -> str:
    return digest_text(canonical_json(value))


def digest_file(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
