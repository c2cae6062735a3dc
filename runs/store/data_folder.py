"""Creating the data folder's contents when the platform starts, never at settings import.

The embedded default keeps everything in one folder (`OLOPROOF_DATA_DIR`): the
SQLite file, the file-system broker's folders, collected static files and the
generated secret key. Settings only name these paths; `data_folder_prepare` makes
them, once Django is set up and before any connection is opened.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from django.conf import settings


def data_folder_prepare() -> None:
    folders = [Path(settings.DATA_DIR), Path(settings.STATIC_ROOT)]
    transport = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {}) or {}
    for key in ("data_folder_in", "data_folder_out", "processed_folder", "control_folder"):
        if transport.get(key):
            folders.append(Path(transport[key]))
    for folder in folders:
        # whitenoise warns on every request while STATIC_ROOT is absent.
        folder.mkdir(parents=True, exist_ok=True)
    if not settings.SECRET_KEY_FROM_ENVIRONMENT:
        settings.SECRET_KEY = _kept_secret_key(Path(settings.SECRET_KEY_FILE), settings.SECRET_KEY)


def _kept_secret_key(path: Path, generated: str) -> str:
    """The key kept in the data folder, writing this process's one if there is none yet.

    O_EXCL: when two processes start together on a fresh folder, one writes and both
    then use its key.
    """
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text(encoding="utf-8").strip() or generated
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(generated)
    return generated


DASHBOARD_FILE = "dashboard.json"
"""Where `oloproof serve` notes the address it serves on, so other commands can link to it."""
DEFAULT_DASHBOARD_URL = "http://127.0.0.1:8000/"


def dashboard_url_remember(*, url: str) -> None:
    """Note the dashboard's address in the data folder (by `oloproof serve`)."""
    path = Path(settings.DATA_DIR) / DASHBOARD_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(json.dumps({"url": url, "pid": os.getpid()}), encoding="utf-8")
    temporary.replace(path)


def dashboard_url() -> str:
    """The dashboard's address, ending in "/": `OLOPROOF_DASHBOARD_URL`, else the one
    `oloproof serve` last served this data folder on, else the default."""
    configured = os.environ.get("OLOPROOF_DASHBOARD_URL", "").strip()
    if configured:
        return configured.rstrip("/") + "/"
    try:
        noted = json.loads((Path(settings.DATA_DIR) / DASHBOARD_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return DEFAULT_DASHBOARD_URL
    url = noted.get("url") if isinstance(noted, dict) else None
    return url.rstrip("/") + "/" if isinstance(url, str) and url else DEFAULT_DASHBOARD_URL


def dashboard_url_known() -> bool:
    """Whether the dashboard's address is known (`OLOPROOF_DASHBOARD_URL`, or noted by
    `oloproof serve`) rather than the default guessed."""
    if os.environ.get("OLOPROOF_DASHBOARD_URL", "").strip():
        return True
    return (Path(settings.DATA_DIR) / DASHBOARD_FILE).is_file()


def store_location() -> str:
    """Where runs are recorded, in words: the SQLite file (and why) or the server database."""
    database = settings.DATABASES["default"]
    if getattr(settings, "EMBEDDED_DATABASE", False):
        reason = getattr(settings, "DATA_DIR_REASON", "")
        return f"{database['NAME']}" + (f" ({reason})" if reason else "")
    host = database.get("HOST") or "localhost"
    port = f":{database['PORT']}" if database.get("PORT") else ""
    return f"database {database.get('NAME')} on {host}{port} (DATABASE_URL)"


def keep_store_from_systems() -> None:
    """Hide the data folder and the SQLite file from every system this process runs in a
    sandbox: a system that could open them could read the answers or forge its figures."""
    from oloproof_core import keep_from_systems

    paths = [Path(settings.DATA_DIR)]
    database = settings.DATABASES["default"]
    if database["ENGINE"].endswith("sqlite3") and str(database["NAME"]) != ":memory:":
        paths.append(Path(database["NAME"]))
    keep_from_systems(*paths)
