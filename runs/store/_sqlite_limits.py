"""Let bulk inserts on SQLite use the library's real variable limit.

Django assumes SQLite's historical limit of 999 variables per statement, which
cuts a bulk insert of 2,000 case rows into ~25 statements. SQLite 3.32+ allows
32,766 (Debian builds more); reading the connection's own limit keeps inserts
to one or two statements per batch.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from django.db.backends.signals import connection_created

_CEILING = 32_766
"""Never more per statement than the 3.32+ default, to keep each statement's SQL text modest."""


def raise_variable_limit(sender: Any, connection: Any, **kwargs: Any) -> None:
    if connection.vendor != "sqlite":
        return
    try:
        limit = connection.connection.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
    except (AttributeError, sqlite3.Error):
        return
    # The features object belongs to this connection wrapper only.
    connection.features.max_query_params = max(999, min(limit, _CEILING))


def connect() -> None:
    connection_created.connect(raise_variable_limit, dispatch_uid="oloproof-sqlite-limit")
