"""`oloproof winner OPTIMIZATION [-o components.yaml]`: an optimization's winning texts.

The work is `oloproof.winner_texts`; the file is the dashboard's download.
"""

from __future__ import annotations

import argparse
import sys

from oloproof._optimization_export import winner_texts


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "winner",
        help="write a recorded optimization's winning component texts as JSON or YAML",
        description="The winner's release and its texts under `components`, which "
        "@system(components=...) and an optimization config's `components:` take as they "
        "are. Exit codes: 0 written, 3 refused (unknown optimization, no winner yet, bad "
        "format).",
    )
    parser.add_argument("optimization", help="the optimization's number, e.g. 3")
    parser.add_argument(
        "-o", "--output", default="-", help="file to write (.json or .yaml); '-' for stdout"
    )
    parser.add_argument("--format", choices=("json", "yaml"), help="default: from the file name")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.output == "-":
        winner_texts(args.optimization, sys.stdout, format=args.format or "json")
        sys.stdout.flush()
        return 0
    winner = winner_texts(args.optimization, args.output, format=args.format)
    print(
        f"wrote the texts of {winner['system'] or 'the system'} {winner['release']} "
        f"(optimization {winner['optimization']}) to {args.output}",
        file=sys.stderr,
    )
    return 0
