"""`oloproof runs list|name|tag|hide|show|delete`: keep the project's recorded runs tidy.

The same as the run page's "Keeping this run" and the REST API (`PATCH`/`DELETE
/api/runs/{id}`), through `oloproof.keep_run`, `oloproof.delete_run` and
`oloproof.list_runs`.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from oloproof.cli import _exit_codes


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "runs",
        help="list, name, tag, hide and delete recorded runs",
        description="A hidden run leaves the history (list --hidden shows it) and is never "
        "a release's figure on its system page; a deleted run is gone with its cases, and "
        "on the audit list. A run with an approval decision cannot be deleted, only "
        "hidden. Exit codes: 0 done, 3 refused (unknown run, a decision, a bad tag).",
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="the newest runs with their names and tags")
    listing.add_argument("--tag", help="only runs with this tag")
    listing.add_argument("--hidden", action="store_true", help="hidden runs too")
    listing.add_argument("--limit", type=int, default=50, help="at most this many (50)")
    listing.add_argument("--json", action="store_true", help="as JSON lines")
    listing.set_defaults(handler=handle_list)
    name = actions.add_parser("name", help='name a run ("" takes the name away)')
    name.add_argument("run", help="the run's number")
    name.add_argument("name", help="its name")
    name.set_defaults(handler=lambda args: _keep(args, name=args.name))
    tag = actions.add_parser("tag", help="give a run exactly these tags (none: no tags)")
    tag.add_argument("run", help="the run's number")
    tag.add_argument("tags", nargs="*", help="one word each, e.g. debug baseline")
    tag.set_defaults(handler=lambda args: _keep(args, tags=args.tags))
    for action, hidden, said in (("hide", True, "hide a run"), ("show", False, "unhide a run")):
        sub = actions.add_parser(action, help=f"{said} in the history")
        sub.add_argument("run", help="the run's number")
        sub.set_defaults(handler=lambda args, hidden=hidden: _keep(args, hidden=hidden))
    delete = actions.add_parser("delete", help="delete a finished run and its cases")
    delete.add_argument("run", help="the run's number")
    delete.set_defaults(handler=handle_delete)


def _keep(args: argparse.Namespace, **change: Any) -> int:
    from oloproof._keeping import keep_run

    kept = keep_run(args.run, **change)
    print(_line(kept))
    return _exit_codes.OK


def _line(run: dict[str, Any]) -> str:
    tags = " ".join(f"[{tag}]" for tag in run.get("tags") or [])
    parts = [f"#{run['run_id']}", str(run.get("release") or ""), str(run.get("name") or "")]
    hidden = "(hidden)" if run.get("hidden") else ""
    return "  ".join(part for part in [*parts, tags, hidden] if part)


def handle_list(args: argparse.Namespace) -> int:
    from oloproof._keeping import list_runs

    for run in list_runs(tag=args.tag, hidden=args.hidden, limit=args.limit):
        print(json.dumps(run) if args.json else _line(run))
    return _exit_codes.OK


def handle_delete(args: argparse.Namespace) -> int:
    from oloproof._keeping import delete_run

    print(f"deleted {delete_run(args.run)}")
    return _exit_codes.OK
