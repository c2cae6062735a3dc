"""`oloproof compare baseline.json candidate.json`: two runs compared case by case."""

from __future__ import annotations

import argparse
import json

from oloproof._results import load
from oloproof.cli import _exit_codes
from oloproof_core import ConfigError


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "compare",
        help="compare two recorded runs on the same cases (paired by case id)",
        description="Pair two runs by case id (each a result file written by 'oloproof run "
        "--json' or a run number in the project's store) and "
        "show, per metric, both estimates, the paired difference (candidate − baseline) with "
        "its interval and p-value, and the regressed and improved cases. Exit codes: 0 "
        "compared, 3 bad input, 4 internal error.",
    )
    parser.add_argument("baseline", help="the baseline run: a result JSON file or a run number")
    parser.add_argument("candidate", help="the candidate run: a result JSON file or a run number")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.add_argument(
        "--confidence", type=float, default=0.95, help="confidence level (default 0.95)"
    )
    parser.add_argument(
        "--no-fdr",
        dest="fdr",
        action="store_false",
        help="flag metrics on plain p-values instead of Benjamini–Hochberg q-values",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if not 0 < args.confidence < 1:
        raise ConfigError(
            f"--confidence must be between 0 and 1 (e.g. 0.95), got {args.confidence}"
        )
    from oloproof_core.compare import compare_runs  # the statistics: only when comparing

    comparison = compare_runs(
        load(args.baseline), load(args.candidate), confidence=args.confidence, fdr=args.fdr
    )
    if args.json:
        print(json.dumps(comparison.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(comparison)
    return _exit_codes.OK
