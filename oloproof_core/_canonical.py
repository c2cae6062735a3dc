"""Canonical JSON text and content digests.

Every digest in oloproof (dataset, case parts, evaluator versions, cache keys) is a
SHA-256 over canonical JSON, so two equal values always digest the same no matter
how their keys were ordered or which process produced them.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def _not_json(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# Every case is encoded at least twice, so the C encoder is built once here rather than
# once per call as json.dumps does; without the C accelerator the pure encoder serves.
_make_c_encoder = getattr(json.encoder, "c_make_encoder", None)
_C_ENCODE = (
    _make_c_encoder(
        None, _not_json, json.encoder.encode_basestring, None, ":", ",", True, False, False
    )
    if _make_c_encoder is not None
    else None
)


def canonical_json(value: Any) -> str:
    """Return `value` as canonical JSON; raises TypeError/ValueError if it is not JSON data."""
    if _C_ENCODE is None or isinstance(value, str):
        return _ENCODER.encode(value)
    return "".join(_C_ENCODE(value, 0))


def digest_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def digest_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def digest_value(value: Any) -> str:
    return digest_text(canonical_json(value))


def digest_file(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
