"""`oloproof export RUN [-o cases.csv]`: a recorded run's cases as CSV or JSON Lines.

The work is `oloproof.export_cases`; the filters are the case table's.
"""

from __future__ import annotations

import argparse
import sys

from oloproof._cases import export_cases
from oloproof.cli import _exit_codes

SEARCH_FIELDS = ("input", "expected", "output", "error", "case_id")
ANNOTATION_FILTERS = (
    "annotated",
    "disagree",
    "rated_pass",
    "rated_fail",
    "scored",
    "commented",
    "unannotated",
)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "export",
        help="write a recorded run's cases as CSV or JSONL",
        description="Each case with its input, expected value, output, error, each "
        "criterion's value and feedback, and people's annotations, in the run's order; the "
        "filters are the dashboard case table's. Exit codes: 0 written, 3 refused (unknown "
        "run, bad format).",
    )
    parser.add_argument("run", help="the run's number, e.g. 12")
    parser.add_argument(
        "-o", "--output", default="-", help="file to write (.csv or .jsonl); '-' for stdout"
    )
    parser.add_argument("--format", choices=("csv", "jsonl"), help="default: from the file name")
    parser.add_argument("--criterion", help="judge --outcome on this criterion")
    parser.add_argument("--outcome", choices=("passed", "failed", "missing"))
    parser.add_argument("--search", help="cases holding every word of this text")
    parser.add_argument("--search-in", choices=SEARCH_FIELDS, help="search one field only")
    parser.add_argument("--annotation", choices=ANNOTATION_FILTERS, help="by annotations")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    to_stdout = args.output == "-"
    written = export_cases(
        args.run,
        sys.stdout if to_stdout else args.output,
        format=args.format or ("jsonl" if to_stdout else None),
        criterion=args.criterion,
        outcome=args.outcome,
        search=args.search,
        search_in=args.search_in,
        annotation=args.annotation,
    )
    sys.stdout.flush()
    where = "stdout" if to_stdout else args.output
    print(f"{written:,} cases of run #{args.run} written to {where}", file=sys.stderr)
    return _exit_codes.OK
