"""`oloproof user create NAME [--approver]`: accounts for the dashboard and the API."""

from __future__ import annotations

import argparse
import sys

from oloproof.cli import _exit_codes
from oloproof.cli._django import django_ready


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "user",
        help="make accounts for the dashboard",
        description="Accounts sign in to the dashboard (and get API tokens). A runner may "
        "queue runs, an approver may also approve or reject release gates, a viewer only "
        "reads. The store is the project's (OLOPROOF_DATA_DIR or DATABASE_URL as for "
        "every command).",
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    create = actions.add_parser(
        "create",
        help="make an account and print its password",
        description="Make an account. Without --password-stdin a password is generated "
        "and printed this once. Exit codes: 0 made, 3 refused (the name is taken, the "
        "password too weak).",
    )
    create.add_argument("name", help="the account's user name")
    role = create.add_mutually_exclusive_group()
    role.add_argument(
        "--approver",
        dest="role",
        action="store_const",
        const="approver",
        help="may approve and reject release gates (and queue runs)",
    )
    role.add_argument(
        "--viewer", dest="role", action="store_const", const="viewer", help="may only read"
    )
    create.add_argument(
        "--password-stdin",
        action="store_true",
        help="read the password from standard input instead of generating one",
    )
    create.set_defaults(handler=handle_create, role="runner")


def handle_create(args: argparse.Namespace) -> int:
    password = sys.stdin.readline().rstrip("\n") if args.password_stdin else None
    django_ready()
    from runs.writers.accounts import account_create

    account, chosen = account_create(username=args.name, password=password, role=args.role)
    from oloproof._store import store_location

    print(f"made {args.role} {account.username!r} in {store_location()}", file=sys.stderr)
    if password is None:
        print(f"login  {account.username} / {chosen}   (shown only now)")
    return _exit_codes.OK
