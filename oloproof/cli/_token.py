"""`oloproof token create|list|revoke`: API tokens for the REST API (`Authorization: Bearer`).

Run where the store is, like `oloproof user` and `oloproof project`: the command line
holds the database's credentials, so it may act on anyone's tokens. On the dashboard
(Settings, API tokens) a person makes and revokes their own. Each change is on the
audit list.
"""

from __future__ import annotations

import argparse
import sys
from datetime import timedelta

from oloproof.cli import _exit_codes
from oloproof.cli._django import django_ready


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "token",
        help="make, list and revoke API tokens",
        description="An API token acts as its account on the REST API, in all of the "
        "account's projects or in one (--project). It is printed once, when made; only a "
        "digest is kept. Exit codes: 0 done, 3 refused (unknown account, project or token).",
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="make a token for an account and print it once")
    create.add_argument("username", help="the account the token acts as")
    create.add_argument("--name", default="", help="a label, e.g. ci")
    create.add_argument("--project", help="limit the token to this project")
    create.add_argument(
        "--days", type=int, help="days until it expires (default OLOPROOF_TOKEN_DAYS, 90)"
    )
    create.set_defaults(handler=handle_create)
    listing = actions.add_parser("list", help="tokens by prefix (of one account when named)")
    listing.add_argument("username", nargs="?", help="only this account's tokens")
    listing.set_defaults(handler=handle_list)
    revoke = actions.add_parser("revoke", help="revoke a token by the prefix `list` shows")
    revoke.add_argument("prefix", help="the token's first 12 characters, e.g. olo_AbCdEfGh")
    revoke.set_defaults(handler=handle_revoke)


def handle_create(args: argparse.Namespace) -> int:
    if args.days is not None and args.days < 1:
        print("oloproof: error: --days must be 1 or more", file=sys.stderr)
        return _exit_codes.BAD_INPUT
    django_ready()
    from runs.selectors.projects import account_named, project_named
    from runs.writers.tokens import api_token_create

    account = account_named(username=args.username)
    project = project_named(slug=args.project) if args.project else None
    lifetime = timedelta(days=args.days) if args.days else None
    record, token = api_token_create(
        user=account, name=args.name, project=project, lifetime=lifetime
    )
    scope = f"project {project.slug}" if project is not None else "all of its projects"
    expires = record.expires_at.date().isoformat() if record.expires_at else "never"
    print(
        f"made token {record.prefix}… for {account.username} ({scope}; expires {expires})",
        file=sys.stderr,
    )
    print(token)
    print("(shown only now)", file=sys.stderr)
    return _exit_codes.OK


def handle_list(args: argparse.Namespace) -> int:
    django_ready()
    from runs.access import LOCAL
    from runs.selectors.accounts import tokens_list
    from runs.selectors.projects import account_named

    owner = account_named(username=args.username) if args.username else None
    for record in tokens_list(user=LOCAL, owner=owner):
        state = "revoked" if record.revoked_at else "active"
        used = record.last_used_at.isoformat(timespec="minutes") if record.last_used_at else "never"
        expires = record.expires_at.date().isoformat() if record.expires_at else "never"
        project = record.project.slug if record.project else "all"
        print(
            f"{record.prefix}  {record.user.username}  project {project}  {state}  "
            f"expires {expires}  last used {used}  {record.name}".rstrip()
        )
    return _exit_codes.OK


def handle_revoke(args: argparse.Namespace) -> int:
    django_ready()
    from runs.access import LOCAL
    from runs.selectors.accounts import token_get
    from runs.writers.tokens import api_token_revoke

    token = api_token_revoke(token=token_get(user=LOCAL, prefix=args.prefix), by=LOCAL)
    print(f"revoked {token.prefix}… of {token.user.username}", file=sys.stderr)
    return _exit_codes.OK
