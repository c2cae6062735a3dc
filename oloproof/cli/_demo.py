"""`oloproof demo`: record an example history and serve the dashboard on it.

On the embedded default (SQLite and the file-system broker in the data folder) it
migrates the database, records three releases of the support bot from
examples/support_bot/ through the platform's `oloproof_demo` command, creates a
demo approver and a read-only viewer, then serves the dashboard with a worker
through `oloproof serve`. Running it again records nothing twice.
"""

from __future__ import annotations

import argparse

from oloproof.cli import _serve
from oloproof.cli._django import django_ready
from oloproof.cli._worker import positive_int


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "demo",
        help="record an example history and serve the dashboard on it",
        description="Migrate the local database, record three releases of the example "
        "support bot (examples/support_bot/) with their release gates, create a demo "
        "approver and a read-only viewer, and serve the dashboard with a worker. "
        "Safe to run again: nothing is recorded twice.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=positive_int, default=8000, help="port (default 8000)")
    parser.add_argument(
        "--no-serve",
        dest="serve",
        action="store_false",
        help="only record the demo and create the users; do not start the dashboard",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    django_ready(migrate=True)
    from django.core.management import call_command

    from runs.management.demo import DEMO_USERS
    from runs.management.demo.story import demo_story

    call_command("oloproof_demo")
    url = f"http://{args.host}:{args.port}/"
    logins = [
        *demo_story(url=url),
        *(f"login       {user.username} / {user.password}   ({user.role})" for user in DEMO_USERS),
    ]
    if not args.serve:
        print(f"\n  dashboard   {url}   (start it: oloproof serve)")
        for line in logins:
            print(f"  {line}")
        print(flush=True)
        return 0
    serve_args = argparse.Namespace(
        host=args.host, port=args.port, threads=8, worker=True, worker_concurrency=1
    )
    return _serve.handle(serve_args, logins=logins)
