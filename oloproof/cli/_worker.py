"""`oloproof worker`: a Celery worker that executes submitted runs."""

from __future__ import annotations

import argparse
import logging
import os
import socket
import sys
import warnings

from oloproof._platform import django_setup


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "worker",
        help="start a worker that executes submitted runs",
        description="Start a Celery worker for this project. It takes chunks of submitted "
        "runs from the broker (CELERY_BROKER_URL: Redis in production; by default the "
        "file-system queue in the data folder) and records their results in the database "
        "(DATABASE_URL, by default SQLite in the data folder). Run as many as you like, "
        "on as many machines as share the broker and the database.",
    )
    parser.add_argument(
        "--concurrency",
        type=positive_int,
        default=None,
        help="chunks executed at once, one process each (default: the number of CPUs)",
    )
    parser.add_argument(
        "--loglevel",
        default="INFO",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="how much the worker logs (default INFO)",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no start-up banner (warnings and errors still show)"
    )
    parser.set_defaults(handler=handle)


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def worker_argv(*, concurrency: int | None, loglevel: str, quiet: bool = False) -> list[str]:
    """Celery's worker arguments; the node name is unique per process, so many can share a host."""
    argv = [
        *(["--quiet"] if quiet else []),
        "worker",
        f"--loglevel={loglevel}",
        f"--hostname=oloproof-{os.getpid()}@{socket.gethostname()}",
        # Gossip, mingle and heartbeats are cluster chatter that claims already make
        # unnecessary; without them the file-system broker stays quiet.
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    if concurrency is not None:
        argv.append(f"--concurrency={concurrency}")
    return argv


def handle(args: argparse.Namespace) -> int:
    django_setup()
    from runs.workers.worker_start import services_wait

    services_wait(say=say, warn=not args.quiet)
    from evalsite.celery import app

    logging.getLogger("py.warnings").addFilter(_without_cancel_notice)
    if args.quiet:
        # The embedded worker of `oloproof serve` (often root in a container): its
        # "running as superuser" notice is for deployments, which start workers themselves.
        from celery.exceptions import SecurityWarning

        warnings.filterwarnings("ignore", category=SecurityWarning)
    argv = worker_argv(concurrency=args.concurrency, loglevel=args.loglevel, quiet=args.quiet)
    try:
        app.worker_main(argv)
    finally:
        # The worker put its logging proxies in place of the standard streams; the
        # process's exit flushes these, which the proxies cannot be asked to do.
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    return 0


def _without_cancel_notice(record: logging.LogRecord) -> bool:
    """False for Celery's notice that it will cancel a lost connection's tasks by default.

    The settings choose explicitly (CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS)
    and the notice would add seven lines to every lost connection. A filter on the logger,
    since the worker turns warnings into log records and sets Celery's back to "always".
    """
    return "we introduced an optional breaking change" not in record.getMessage()


def say(line: str) -> None:
    """One line of the worker's own about its start, where its process manager collects it."""
    print(f"oloproof worker: {line}", file=sys.stderr, flush=True)
