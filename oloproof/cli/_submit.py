"""`oloproof run config.yaml --submit [--wait]`: queue a run for the workers.

The work is `oloproof.submit` (the library does what the command does); this module
prints what it says and the result.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from oloproof._submit import submit
from oloproof.cli import _exit_codes
from oloproof.cli._progress import ProgressBar


def _log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def handle_submit(args: argparse.Namespace) -> int:
    submission = submit(
        args.config,
        concurrency=args.concurrency,
        repeats=args.repeats,
        judge_repeats=args.judge_repeats,
        log=_log,
    )
    if not args.wait:
        print(submission.run_id)
        print(
            f"follow it with `oloproof run {args.config} --submit --wait` or on the "
            f"dashboard: {submission.url}",
            file=sys.stderr,
        )
        return _exit_codes.OK
    result = submission.wait(log=_log, progress=progress_line(args))
    code = print_result(result, args)
    print(f"recorded run #{submission.run_id} → {submission.url}", file=sys.stderr)
    return code


def progress_line(args: argparse.Namespace) -> ProgressBar:
    """One line that advances case by case on a terminal; none with --json - or no terminal."""
    wanted = getattr(args, "progress", None)
    if getattr(args, "json_path", None) == "-":
        wanted = False
    return ProgressBar(enabled=wanted)


def print_result(result: Any, args: argparse.Namespace) -> int:
    gate = result.extras.get("gate")
    data = result.to_dict()
    data["gate"] = gate
    if args.json_path == "-":
        print(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    else:
        print(result)
        if args.json_path:
            with open(args.json_path, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=2, ensure_ascii=False, default=str)
            print(f"\nresult written to {args.json_path}", file=sys.stderr)
    sys.stdout.flush()
    return _exit_codes.for_gate_outcome(None if gate is None else gate.get("outcome"))
