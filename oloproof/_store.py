"""Which store a run records into when the caller does not pass one.

By default every run is recorded in the project's Django store (SQLite in the data
folder found from the project, see `evalsite.project`, or the database named by
`DATABASE_URL`), so the dashboard shows it and the verdict cache outlasts the
process. `OLOPROOF_RECORD=0` keeps everything in this process's memory instead.
This module is the one place where the library reaches Django.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping, Sequence

    from oloproof._store_process import StoreProcess
    from oloproof_core import (
        CacheEntry,
        CaseResult,
        Earlier,
        RecordsAsItGoes,
        Result,
        RunOpening,
        Store,
        Verdict,
    )
    from oloproof_core.optimize import Ledger

# The engine and Django load on first use, not with this module: `oloproof run` starts
# the store's process (`start_store_early`) before it loads anything else.
_process_store: Store | None = None
_process_ledger: Ledger | None = None
_local_store: Store | None = None
_local_ledger: Ledger | None = None
_store_process: StoreProcess | None = None
_lock = threading.Lock()

_ON = frozenset({"1", "true", "yes", "on", ""})
_OFF = frozenset({"0", "false", "no", "off"})


def recording_enabled() -> bool:
    """False when `OLOPROOF_RECORD` turns recording into the local store off."""
    raw = os.environ.get("OLOPROOF_RECORD", "1")
    value = raw.strip().lower()
    if value in _ON:
        return True
    if value in _OFF:
        return False
    from oloproof_core import ConfigError

    raise ConfigError(
        f"OLOPROOF_RECORD={raw!r} is not understood: set 1 to record runs in the local "
        "store (the default) or 0 to keep them in this process's memory only"
    )


def default_store() -> Store:
    """The store `evaluate()` and `oloproof run` use when none is given.

    The local Django store unless `OLOPROOF_RECORD=0`; then an in-memory store
    that lives as long as this process.
    """
    if not recording_enabled():
        return _memory_store()
    global _local_store
    with _lock:
        if _local_store is None:
            from oloproof._platform import outside_event_loop

            _local_store = outside_event_loop(_open_local_store)
        return _local_store


def _memory_store() -> Store:
    """This process's in-memory store, made on first use."""
    global _process_store
    with _lock:
        if _process_store is None:
            from oloproof_core import InMemoryStore

            _process_store = InMemoryStore()
        return _process_store


def _open_local_store() -> Store:
    """Set Django up (if the host process has not), migrate the embedded database, connect."""
    from django.apps import apps

    from oloproof._platform import django_setup
    from oloproof_core import OloproofError

    if not _django_configured_here():
        data_folder_made()  # oloproof's settings keep their secret key there
    django_setup()
    if not apps.is_installed("runs"):
        raise OloproofError(
            "this process configured Django without the oloproof apps ('runs', 'metrics'); "
            "pass store=... to evaluate(), or set OLOPROOF_RECORD=0"
        )
    from runs.errors import DomainError
    from runs.store import DjangoStore
    from runs.store.database import database_ready

    try:
        database_ready()
    except DomainError as exc:
        raise OloproofError(str(exc)) from None
    return DjangoStore()


def default_store_on_use() -> Store:
    """`default_store()`, opened beside the run rather than before it.

    Opening the local store (Django's set-up and the schema check) takes 0.2-0.5 s. When
    this process has not set Django up, the store opens in a process of its own
    (`oloproof._store_process`) while the run goes on; otherwise it opens here when the
    run prepares it while its system's processes start, or on first use.
    """
    if not recording_enabled():
        return _memory_store()
    with _lock:
        if _local_store is not None:
            return _local_store
    if not _django_configured_here():
        return local_store_process()
    return LocalStoreOnUse()


def local_store_process() -> StoreProcess:
    """The local store's own process, started on the first call (see `default_store_on_use`)."""
    global _store_process
    with _lock:
        if _store_process is None:
            from oloproof._store_process import StoreProcess
            from oloproof_core import keep_from_systems

            # The store's process finds the same folder (same environment and folder). Made
            # now, so that it exists to be hidden when the system's sandbox is made.
            keep_from_systems(data_folder_made())
            _store_process = StoreProcess()
            atexit.register(_store_process.close)
        return _store_process


def data_folder_made() -> Path:
    """The local store's data folder, made if it is missing; one that cannot be (a file
    of that name, a folder this user may not write) is a `OloproofError` saying so."""
    from oloproof._platform import pin_platform_packages

    pin_platform_packages()  # a user's folder named evalsite must not answer
    from evalsite.project import data_dir, data_dir_reason
    from oloproof_core import OloproofError

    folder = data_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK | os.X_OK):
            raise PermissionError(13, "this user may not write in it")
    except OSError as exc:
        what = "a file, not a folder" if folder.is_file() else exc.strerror
        raise OloproofError(
            f"the data folder {folder} ({data_dir_reason()}) cannot hold the local store: "
            f"{what}. Point OLOPROOF_DATA_DIR at a folder this user can write (it is made "
            "if missing), or set OLOPROOF_RECORD=0 to record nothing"
        ) from None
    return folder


def hide_data_folder() -> None:
    """Hide the local store's data folder from every sandbox made from now on, before the
    store itself is opened (a run config's system is declared in one first)."""
    from oloproof._platform import pin_platform_packages

    pin_platform_packages()
    from evalsite.project import data_dir
    from oloproof_core import keep_from_systems

    keep_from_systems(data_dir())


def start_store_early() -> None:
    """Start opening the local store now, if a run will use its own process for it: a
    command calls this first, so the store opens while the command reads its config."""
    if recording_enabled() and _local_store is None and not _django_configured_here():
        local_store_process()


def _django_configured_here() -> bool:
    """Whether this process has Django's settings (its own, or oloproof's) in place."""
    conf = sys.modules.get("django.conf")
    return conf is not None and bool(conf.settings.configured)


class LocalStoreOnUse:
    """The project's local store, opened on first use (see `default_store_on_use`)."""

    def prepare(self) -> None:
        default_store()

    def opened(self) -> Store:
        return default_store()

    def get_verdicts(self, keys: Collection[str]) -> Mapping[str, Verdict]:
        return self.opened().get_verdicts(keys)

    def put_verdicts(self, entries: Sequence[CacheEntry]) -> None:
        self.opened().put_verdicts(entries)

    def record_run(self, result: Result) -> str | None:
        return self.opened().record_run(result)

    def find_baseline(self, system_name: str, release: str | None) -> Result | None:
        return self.opened().find_baseline(system_name, release)

    def earlier_tries(self, cases_digest: str, system_name: str, source: str) -> Earlier:
        store: Any = self.opened()
        found: Earlier = store.earlier_tries(cases_digest, system_name, source)
        return found

    def run_open(self, opening: RunOpening) -> str:
        return self._recording().run_open(opening)

    def run_cases_add(self, run_id: str, cases: Sequence[CaseResult], first_position: int) -> None:
        self._recording().run_cases_add(run_id, cases, first_position)

    def run_close(self, run_id: str, result: Result) -> str:
        return self._recording().run_close(run_id, result)

    def run_abandon(self, run_id: str, reason: str) -> None:
        self._recording().run_abandon(run_id, reason)

    def _recording(self) -> RecordsAsItGoes:
        store: RecordsAsItGoes = self.opened()  # type: ignore[assignment]
        return store


def is_local_store(store: Store) -> bool:
    """True for the project's Django store (the one the dashboard shows)."""
    if isinstance(store, LocalStoreOnUse):
        return True
    if store is _store_process and store is not None:
        return True
    return store is _local_store and store is not None


def store_location() -> str:
    """Where the project's store keeps runs, for commands to say."""
    if _store_process is not None and not _django_configured_here():
        return _store_process.location()
    from runs.store.data_folder import store_location as location

    return location()


def run_url(run_id: str | int | None) -> str | None:
    """The dashboard page of a recorded run, or None for a run kept only in memory."""
    if run_id is None or not str(run_id).isdigit():
        return None
    if _store_process is not None and not _django_configured_here():
        return f"{_store_process.dashboard_url()}runs/{run_id}/"
    from runs.store.data_folder import dashboard_url

    return f"{dashboard_url()}runs/{run_id}/"


def run_url_hint(run_id: str | int | None) -> str | None:
    """How to open a recorded run's page where no dashboard has served the store yet
    (its address then is only the default's guess); None when the address is known."""
    if run_id is None or not str(run_id).isdigit():
        return None
    if _store_process is not None and not _django_configured_here():
        known = _store_process.dashboard_known()
    else:
        from runs.store.data_folder import dashboard_url_known

        known = dashboard_url_known()
    if known:
        return None
    return (
        f"(no dashboard has served this store yet: start one with `oloproof serve` in this "
        f"project's folder, then open runs/{run_id}/ on it)"
    )


def default_ledger() -> Ledger:
    """Where `optimize()` records when no ledger is given: beside the default store."""
    global _local_ledger, _process_ledger
    if not recording_enabled():
        with _lock:
            if _process_ledger is None:
                # Imported here: the optimizers are heavy and most runs never optimize.
                from oloproof_core.optimize import InMemoryLedger

                _process_ledger = InMemoryLedger()
            return _process_ledger
    if not _django_configured_here():
        # Kept by the store's own process, as `oloproof run` records (`_ledger_process`).
        store = local_store_process()
        with _lock:
            if _local_ledger is None:
                from oloproof._ledger_process import StoreProcessLedger

                _local_ledger = StoreProcessLedger(store)
            return _local_ledger
    default_store()
    with _lock:
        if _local_ledger is None:
            from runs.workers.optimization_ledger import DjangoLedger

            _local_ledger = DjangoLedger()
        return _local_ledger
