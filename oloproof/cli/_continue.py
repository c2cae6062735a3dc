"""`oloproof continue RUN [--wait]`: run more cases of an inconclusive sequential gate.

The work is `oloproof.continue_run` (the library does what the command does); this
module prints what it says and, with --wait, the result.
"""

from __future__ import annotations

import argparse
import sys

from oloproof._submit import Submission, continue_run
from oloproof.cli import _exit_codes
from oloproof.cli._submit import print_result, progress_line


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "continue",
        help="run more cases of a run whose sequential gate is inconclusive (on the workers)",
        description="Queue more cases of a submitted run whose policy is sequential and "
        "whose gate is inconclusive. The workers add them to the same run, batch after "
        "batch in the order fixed by the case ids, deciding the gate over all its cases "
        "after each batch, until it decides or the dataset's cases run out. Exit codes "
        "with --wait: 0 passed, 1 failed, 2 inconclusive, 3 bad input.",
    )
    parser.add_argument(
        "run", type=int, help="the run's number (as `oloproof run --submit` prints)"
    )
    parser.add_argument(
        "--wait", action="store_true", help="follow the run's progress and print its result"
    )
    parser.add_argument(
        "--json",
        metavar="PATH",
        dest="json_path",
        help="with --wait: also write the result as JSON to PATH ('-' for stdout)",
    )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="with --wait: show a progress line (default: when stderr is a terminal)",
    )
    parser.set_defaults(handler=handle)


def _log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def handle(args: argparse.Namespace) -> int:
    submission = continue_run(args.run, log=_log)
    assert isinstance(submission, Submission)
    if not args.wait:
        print(submission.run_id)
        print(f"follow it on the dashboard: {submission.url}", file=sys.stderr)
        return _exit_codes.OK
    result = submission.wait(log=_log, progress=progress_line(args))
    code = print_result(result, args)
    print(f"recorded run #{submission.run_id} → {submission.url}", file=sys.stderr)
    return code
