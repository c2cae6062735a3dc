"""Static files: content-hashed names, gzip (and brotli) copies, a year in browser caches.

`oloproof serve` (and so the demo and the container) collects the files into
STATIC_ROOT when they start, unless what is there was collected from the very same
sources (`static_files_collect`): whitenoise's CompressedManifestStaticFilesStorage
writes each file under a name carrying its content's hash, with a `.gz` copy (and a
`.br` one when the `brotli` package is installed), and the pages link the hashed
names, which the middleware serves with a one-year, immutable Cache-Control.

A process that never collected (the test suite, `manage.py runserver` on a fresh
checkout) links the plain names, which the middleware serves from the source folders
through the finders with a short cache lifetime: nothing needs a collectstatic step
to work, and whatever serves pages to people does collect.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.management import call_command
from whitenoise.middleware import WhiteNoiseMiddleware  # type: ignore[import-untyped]
from whitenoise.storage import CompressedManifestStaticFilesStorage  # type: ignore[import-untyped]

SOURCES_FILE = "sources.json"
"""Beside the manifest: what the collected files were made from (name, size, mtime)."""
ONE_YEAR_S = 365 * 24 * 60 * 60
_IGNORED = ["CVS", ".*", "*~", "admin", "ninja"]
"""Django's defaults, and the admin's and the API docs' own folders: hundreds of files
that would make every start slower for pages people rarely open; they keep their
plain names, served through the finders."""


class StaticFilesStorage(CompressedManifestStaticFilesStorage):
    """Hashed names from the collected manifest; the plain name of a file not collected."""

    manifest_strict = False

    def stored_name(self, name: str) -> str:
        try:
            return str(super().stored_name(name))
        except ValueError:
            # Not in STATIC_ROOT (nothing collected yet): the finders serve the plain name.
            return name


class StaticFilesMiddleware(WhiteNoiseMiddleware):
    """whitenoise, keeping a hashed file cached for a year rather than its default ten."""

    FOREVER = ONE_YEAR_S


def _sources() -> dict[str, list[int]]:
    """Every file the finders would collect: its name, size and modification time."""
    found: dict[str, list[int]] = {}
    for finder in finders.get_finders():
        for path, storage in finder.list(_IGNORED):
            prefix = getattr(storage, "prefix", None)
            name = f"{prefix}/{path}" if prefix else path
            status = os.stat(storage.path(path))
            found.setdefault(name, [status.st_size, status.st_mtime_ns])
    return found


def static_files_collect() -> bool:
    """Collect the static files into STATIC_ROOT unless they are current; True if it did.

    Cheap when current (a few stat calls). Two processes starting together on one
    folder take turns (a file lock), and the second finds the files current.
    """
    root = Path(settings.STATIC_ROOT)
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".collect.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        sources = _sources()
        if _collected_from(root) == sources and (root / "staticfiles.json").is_file():
            return False
        call_command(
            "collectstatic",
            interactive=False,
            verbosity=0,
            ignore_patterns=_IGNORED,
            use_default_ignore_patterns=False,
        )
        (root / SOURCES_FILE).write_text(json.dumps(sources, sort_keys=True), encoding="utf-8")
        return True


def _collected_from(root: Path) -> Any:
    with contextlib.suppress(OSError, ValueError):
        return json.loads((root / SOURCES_FILE).read_text(encoding="utf-8"))
    return None
