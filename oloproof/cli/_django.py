"""Bringing up Django for the commands that talk to the platform (worker, serve, submit)."""

from __future__ import annotations

import os


def django_ready(*, migrate: bool = False) -> None:
    """Set Django up and make sure the database is migrated.

    The embedded SQLite file is always migrated on first use. A server database
    (DATABASE_URL) is migrated only when `migrate` is set (`oloproof serve`); other
    commands refuse to run on an unmigrated one and say how to migrate it.
    """
    import django
    from django.apps import apps
    from django.conf import settings

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
    if not apps.ready:
        django.setup()
    from oloproof._store import _ensure_migrated

    embedded = bool(getattr(settings, "EMBEDDED_DATABASE", False))
    if migrate and not embedded:
        from django.core.management import call_command

        call_command("migrate", interactive=False, verbosity=0)
        return
    # The embedded file is migrated under a lock: `serve` and its worker start together.
    _ensure_migrated(embedded=embedded)
