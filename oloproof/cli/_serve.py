"""`oloproof serve`: migrate, serve the dashboard and API, and run a worker beside them.

At start it collects the static files (hashed, compressed names cached for a year;
skipped when they are current: evalsite/static_files.py). The site is served by
waitress, a multi-threaded production WSGI server written in pure Python with no
dependencies of its own (Django's runserver is for development only). The embedded
worker is a child process started with the same command, so a laptop needs nothing
else; in production run `oloproof serve --no-worker` behind a reverse proxy and start
workers with `oloproof worker`.
"""

from __future__ import annotations

import argparse
import errno
import signal
import subprocess
import sys
from collections.abc import Sequence
from types import FrameType
from typing import Any

from oloproof.cli._django import django_ready
from oloproof.cli._worker import positive_int
from oloproof_core import OloproofError

_WORKER_STOP_TIMEOUT_S = 30


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "serve",
        help="serve the dashboard and API, with a worker",
        description="Migrate the database, serve the dashboard and REST API with waitress "
        "(a production WSGI server) and, unless --no-worker, start a worker process that "
        "executes submitted runs.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=positive_int, default=8000, help="port (default 8000)")
    parser.add_argument(
        "--threads", type=positive_int, default=8, help="request threads (default 8)"
    )
    parser.add_argument(
        "--no-worker",
        dest="worker",
        action="store_false",
        help="do not start a worker (run `oloproof worker` elsewhere)",
    )
    parser.add_argument(
        "--worker-concurrency",
        type=positive_int,
        default=2,
        help="processes of the embedded worker (default 2)",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace, *, logins: Sequence[str] = ()) -> int:
    """Serve until interrupted; the address and the logins are the last lines printed."""
    django_ready(migrate=True)
    from django.core.wsgi import get_wsgi_application

    from evalsite.static_files import static_files_collect
    from runs.store.data_folder import dashboard_url_remember

    # Before the application exists: its static-files middleware indexes what is collected.
    static_files_collect()

    server = _bind(get_wsgi_application(), args)
    url = f"http://{args.host}:{args.port}/"
    dashboard_url_remember(url=url)
    lines = [*logins, *_first_login()]
    worker = _start_worker(args.worker_concurrency) if args.worker else None
    _stop_on_sigterm()
    _announce(url, lines)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
        if worker is not None:
            _stop_worker(worker)
    return 0


def _bind(application: Any, args: argparse.Namespace) -> Any:
    """The server, listening already: a port in use is said before anything starts."""
    import waitress.server

    try:
        return waitress.server.create_server(
            application, host=args.host, port=args.port, threads=args.threads
        )
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise OloproofError(
                f"port {args.port} on {args.host} is already in use (another `oloproof serve`?); "
                f"choose another with --port, e.g. --port {args.port + 1}"
            ) from None
        raise OloproofError(f"cannot listen on {args.host}:{args.port}: {exc.strerror}") from None


def _first_login() -> list[str]:
    """The first account of a store that has none: made on the embedded database (its login
    printed this once); on a server database, how to make one."""
    from django.conf import settings

    from runs.selectors.accounts import accounts_exist
    from runs.writers.accounts import account_first_create

    if not getattr(settings, "EMBEDDED_DATABASE", False):
        if accounts_exist():
            return []
        return ["no account yet: make one with `oloproof user create NAME --approver`"]
    made = account_first_create()
    if made is None:
        return []
    account, password = made
    return [
        f"login       {account.username} / {password}   (may approve gates; shown only now)",
        "            more accounts: oloproof user create NAME [--approver]",
    ]


def _announce(url: str, lines: Sequence[str]) -> None:
    print(f"\n  dashboard   {url}", flush=True)
    for line in lines:
        print(f"  {line}", flush=True)
    print("  (Ctrl-C stops it)\n", flush=True)


def _start_worker(concurrency: int) -> subprocess.Popen[bytes]:
    # Quiet: the worker's banner and routine log lines would bury the address and logins.
    command = [
        sys.executable,
        "-m",
        "oloproof",
        "worker",
        f"--concurrency={concurrency}",
        "--loglevel=WARNING",
        "--quiet",
    ]
    return subprocess.Popen(command)


def _stop_worker(worker: subprocess.Popen[bytes]) -> None:
    # SIGTERM is Celery's warm shutdown: chunks in progress finish and are recorded.
    worker.terminate()
    try:
        worker.wait(timeout=_WORKER_STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait()


def _stop_on_sigterm() -> None:
    """Treat SIGTERM like Ctrl-C, so the worker child is stopped rather than orphaned."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
