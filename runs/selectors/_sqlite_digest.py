"""SHA-256 as an SQL function on SQLite, so the database sorts cases in reading order.

The statistics read a run's cases in the order of their ids' SHA-256 digests
(`oloproof_core.stats`). PostgreSQL computes the digest itself (`sha256`); SQLite has
no such function, so each connection is given one, returning the digest's bytes, which
SQLite orders byte by byte, as the statistics do.
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.db.backends.signals import connection_created

SQLITE_DIGEST = "oloproof_sha256"
"""The function's name in SQL."""


def _digest(text: str | None) -> bytes | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8")).digest()


def add_digest_function(sender: Any, connection: Any, **kwargs: Any) -> None:
    if connection.vendor == "sqlite":
        connection.connection.create_function(SQLITE_DIGEST, 1, _digest, deterministic=True)


def connect() -> None:
    connection_created.connect(add_digest_function, dispatch_uid="oloproof-sqlite-digest")
