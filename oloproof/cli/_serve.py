"""`oloproof serve`: migrate, serve the dashboard and API, and run a worker beside them.

The site is served by waitress, a multi-threaded production WSGI server written in
pure Python with no dependencies of its own (Django's runserver is for development
only). The embedded worker is a child process started with the same command, so a
laptop needs nothing else; in production run `oloproof serve --no-worker` behind a
reverse proxy and start workers with `oloproof worker`.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
from types import FrameType

from oloproof.cli._django import django_ready
from oloproof.cli._worker import positive_int

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


def handle(args: argparse.Namespace) -> int:
    django_ready(migrate=True)
    import waitress
    from django.core.wsgi import get_wsgi_application

    application = get_wsgi_application()
    worker = _start_worker(args.worker_concurrency) if args.worker else None
    _stop_on_sigterm()
    print(f"oloproof: serving on http://{args.host}:{args.port}/", file=sys.stderr, flush=True)
    try:
        waitress.serve(
            application, host=args.host, port=args.port, threads=args.threads, _quiet=True
        )
    except KeyboardInterrupt:
        pass
    finally:
        if worker is not None:
            _stop_worker(worker)
    return 0


def _start_worker(concurrency: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "oloproof", "worker", f"--concurrency={concurrency}"]
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
