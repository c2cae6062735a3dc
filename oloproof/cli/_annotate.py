"""`oloproof annotate RUN CASE --rating fail --comment ...`: rate, score or comment on a case.

The work is `oloproof.annotate` (the library does what the command does). Without
`--show`, it sets the parts given and keeps the others; `--show` prints the case's
annotations (with `--history`, every change).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from oloproof._cases import KEEP, annotate, annotations_read
from oloproof.cli import _exit_codes


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "annotate",
        help="rate, score or comment on one case of a recorded run",
        description="Record a person's reading of one case beside its verdicts (which "
        "never change): a pass/fail rating, a score from 0 to 1, a comment. Each change is "
        "kept. Acts as the command line (`<login>@command-line`) unless --by names an "
        "account, whose runner role in the run's project is checked. Exit codes: 0 done, "
        "3 refused (unknown run or case, a value out of range).",
    )
    parser.add_argument("run", help="the run's number, e.g. 12")
    parser.add_argument("case", help="the case id")
    parser.add_argument(
        "--rating", choices=("pass", "fail", "none"), default=KEEP, help="your reading"
    )
    parser.add_argument(
        "--score", type=_score, default=KEEP, help="a score from 0 to 1 ('none' clears it)"
    )
    parser.add_argument("--comment", default=KEEP, help="a comment ('' clears it)")
    parser.add_argument("--by", metavar="USERNAME", help="annotate as this account")
    parser.add_argument("--show", action="store_true", help="print the case's annotations")
    parser.add_argument("--history", action="store_true", help="with --show: every change")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=handle)


def _score(text: str) -> float | None:
    if text.strip().lower() == "none":
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a score is a number from 0 to 1, got {text!r}") from None


def handle(args: argparse.Namespace) -> int:
    if args.show or args.history:
        found = annotations_read(args.run, args.case, history=args.history)
        _print(found, args.json)
        return _exit_codes.OK
    if args.rating is KEEP and args.score is KEEP and args.comment is KEEP:
        print(
            "oloproof annotate: error: give --rating, --score or --comment (or --show)",
            file=sys.stderr,
        )
        return _exit_codes.BAD_INPUT
    rating = None if args.rating == "none" else args.rating
    saved = annotate(
        args.run, args.case, rating=rating, score=args.score, comment=args.comment, by=args.by
    )
    _print([saved], args.json)
    return _exit_codes.OK


def _print(items: list[dict[str, Any]], as_json: bool) -> None:
    if as_json:
        print(json.dumps(items, indent=2, ensure_ascii=False))
        return
    for item in items:
        parts = [item["rating"] or "no rating"]
        if item["score"] is not None:
            parts.append(f"score {item['score']:g}")
        when = item.get("changed_at") or item.get("updated_at")
        version = f" v{item['version']}" if "version" in item else ""
        print(f"{item['case_id']}  {item['author']}{version}  {', '.join(parts)}  {when}")
        if item["comment"]:
            print(f"    {item['comment']}")
