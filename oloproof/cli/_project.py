"""`oloproof project ...`: projects, their members and the folders their code may come from.

Run where the store is (the same data folder or DATABASE_URL as every command): the
command line holds the database's credentials, so it acts as an administrator of
every project. On the dashboard and the API the same changes need the project's
admin role.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from oloproof.cli import _exit_codes
from oloproof.cli._django import django_ready

ROLES = ("viewer", "runner", "approver", "admin")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "project",
        help="projects, their members and their code roots",
        description="Everything belongs to a project; a member has one role in it (viewer "
        "< runner < approver < admin), and workers run only code inside the project's "
        "registered code roots. Exit codes: 0 done, 3 refused (unknown project or account).",
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="projects with their members and code roots")
    listing.set_defaults(handler=handle_list)
    create = actions.add_parser(
        "create",
        help="make a project, or set whether its approvers may decide their own runs",
    )
    create.add_argument("slug", help="the project's short name, e.g. support-bot")
    create.add_argument("--name", default="", help="a longer name to show")
    create.add_argument(
        "--allow-self-approval",
        action="store_true",
        help="let an approver decide (and revoke decisions on) a run they submitted; "
        "without it, four eyes (the default, set again on an existing project)",
    )
    create.set_defaults(handler=handle_create)
    member = actions.add_parser("member", help="give an account a role in a project")
    member.add_argument("slug", help="the project")
    member.add_argument("username", help="the account (see `oloproof user create`)")
    member.add_argument("role", choices=ROLES, help="its role there")
    member.set_defaults(handler=handle_member)
    root = actions.add_parser("root", help="register a folder the project's code may come from")
    root.add_argument("slug", help="the project")
    root.add_argument("path", help="the folder (links are resolved)")
    root.set_defaults(handler=handle_root)


def _project(slug: str) -> Any:
    from runs.selectors.projects import project_named

    return project_named(slug=slug)


def handle_list(args: argparse.Namespace) -> int:
    django_ready()
    from runs.access import LOCAL
    from runs.selectors.projects import project_overview

    for project in project_overview(user=LOCAL):
        print(f"{project['slug']}  ({project['name']})")
        for username, role in project["members"]:
            print(f"    member  {username}: {role}")
        for path in project["code_roots"]:
            print(f"    code    {path}")
    return _exit_codes.OK


def handle_create(args: argparse.Namespace) -> int:
    django_ready()
    from runs.writers.projects import project_ensure

    project = project_ensure(
        slug=args.slug, name=args.name, allow_self_approval=args.allow_self_approval
    )
    print(f"project {project.slug!r} is there", file=sys.stderr)
    return _exit_codes.OK


def handle_member(args: argparse.Namespace) -> int:
    django_ready()
    from runs.access import LOCAL
    from runs.selectors.projects import account_named
    from runs.writers.projects import membership_set

    account = account_named(username=args.username)
    membership_set(by=LOCAL, project=_project(args.slug), user=account, role=args.role)
    print(f"{args.username} is {args.role} in {args.slug}", file=sys.stderr)
    return _exit_codes.OK


def handle_root(args: argparse.Namespace) -> int:
    django_ready()
    from runs.access import LOCAL
    from runs.writers.projects import code_root_register

    root = code_root_register(
        by=LOCAL, project=_project(args.slug), path=os.path.abspath(args.path)
    )
    print(f"{args.slug} may run code from {root.path}", file=sys.stderr)
    return _exit_codes.OK
