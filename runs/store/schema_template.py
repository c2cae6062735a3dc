"""A new embedded store made from a copy of a migrated one, not by migrating it again.

Migrating a new SQLite store applies every migration one by one (most of a second, on
the first use of every project's store). The result depends only on the migrations
shipped, so the first store migrated with a given set of migrations is copied, by
SQLite's own backup, to a template in the user's cache folder, named by the digest of
those migrations' files; a later new store is that template copied in. A changed
migration is another digest, so a stale template is never used. The template is made
right after migrating, before anything else is written.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import tempfile
from collections.abc import Iterable
from pathlib import Path

from django.db import DEFAULT_DB_ALIAS, connections


def template_path(migrations: Iterable[tuple[str, Path]]) -> Path:
    """Where the template for these migration files (app label, path) is kept."""
    digest = hashlib.sha256()
    for app, path in sorted(migrations):
        digest.update(f"{app}/{path.name}\0".encode())
        digest.update(path.read_bytes())
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "oloproof" / "schemas" / f"{digest.hexdigest()[:24]}.sqlite3"


def store_from_template(database: str, template: Path) -> bool:
    """Fill the new (empty) store `database` from `template`; False if there is none."""
    if not template.is_file():
        return False
    connections[DEFAULT_DB_ALIAS].close()
    try:
        with (
            contextlib.closing(sqlite3.connect(template)) as source,
            contextlib.closing(sqlite3.connect(database)) as target,
        ):
            source.backup(target)
    except sqlite3.Error:
        return False  # a damaged template: the store is migrated as it would have been
    return True


def template_keep(database: str, template: Path) -> None:
    """Copy the just-migrated store `database` to `template`, if none is kept yet."""
    if template.is_file():
        return
    with contextlib.suppress(OSError, sqlite3.Error):
        template.parent.mkdir(parents=True, exist_ok=True)
        handle, partial = tempfile.mkstemp(dir=template.parent, suffix=".partial")
        os.close(handle)
        try:
            with (
                contextlib.closing(sqlite3.connect(database)) as source,
                contextlib.closing(sqlite3.connect(partial)) as target,
            ):
                source.backup(target)
            os.replace(partial, template)  # whole or not at all, for a process reading it
        finally:
            with contextlib.suppress(OSError):
                os.unlink(partial)
