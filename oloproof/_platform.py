"""Bringing the platform (Django, the `runs` and `metrics` apps) up from the library.

Two things make that safe wherever the library is used:

- the platform's own top-level packages (`evalsite`, `runs`, `metrics`) are loaded
  from where oloproof is installed, never found through `sys.path`, so a user's
  folder of the same name (a `metrics/` of metric files, say) in the working
  directory or a config's folder can neither shadow them nor be shadowed;
- database work asked for from a running event loop (a notebook cell, an async
  test) is done in a short-lived thread, since Django refuses ORM calls there.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from oloproof_core import OloproofError

PLATFORM_PACKAGES = ("evalsite", "runs", "metrics")
_INSTALL_DIR = Path(__file__).resolve().parent.parent
"""The folder holding `oloproof/` and, beside it, the platform's packages."""

T = TypeVar("T")


def pin_platform_packages() -> None:
    """Import the platform's top-level packages from beside `oloproof/`, whatever sys.path says."""
    for name in PLATFORM_PACKAGES:
        folder = _INSTALL_DIR / name
        loaded = sys.modules.get(name)
        if loaded is not None:
            _check_is_ours(name, loaded, folder)
            continue
        init = folder / "__init__.py"
        if not init.is_file():
            continue  # an installation without the platform: Django setup says so
        spec = importlib.util.spec_from_file_location(
            name, init, submodule_search_locations=[str(folder)]
        )
        if spec is None or spec.loader is None:  # pragma: no cover - a real file always loads
            continue
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise


def _check_is_ours(name: str, module: object, folder: Path) -> None:
    locations = [str(Path(path).resolve()) for path in getattr(module, "__path__", [])]
    if not (folder / "__init__.py").is_file() or str(folder) in locations:
        return
    where = ", ".join(locations) or getattr(module, "__file__", "?")
    raise OloproofError(
        f"a module named {name!r} from {where} was imported before oloproof started its "
        f"platform, whose own package {name!r} lives in {folder}; import oloproof first, or "
        "load your files by path (e.g. '- metrics/label/metric.py' in a run config)"
    )


def django_setup() -> None:
    """Configure Django with oloproof's settings unless the host process already has."""
    import django
    from django.apps import apps

    pin_platform_packages()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
    if not apps.ready:
        django.setup()


def outside_event_loop(work: Callable[[], T]) -> T:
    """Run `work` here, or in a fresh thread when this thread runs an event loop.

    The thread closes the database connections it opened, so none is left behind.
    """
    # No event loop can run where asyncio was never imported: a run from the command
    # line skips loading it.
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return work()
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return work()
    from concurrent.futures import ThreadPoolExecutor

    def isolated() -> T:
        try:
            return work()
        finally:
            _close_connections()

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="oloproof") as pool:
        return pool.submit(isolated).result()


def _close_connections() -> None:
    if "django.db" in sys.modules:
        from django.db import connections

        connections.close_all()
