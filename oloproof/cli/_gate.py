"""`oloproof gate result.json release.yaml`: decide (again) a recorded run under a policy."""

from __future__ import annotations

import argparse
import json

from oloproof._results import gate as decide
from oloproof.cli import _exit_codes


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "gate",
        help="decide a recorded run under a release policy",
        description="Apply a release policy (release.yaml) to a run: a result file written "
        "by 'oloproof run --json', or a run recorded in the project's store by its number. "
        "A policy's baseline (a release, the last approved run) is looked up in the same "
        "store. Exit codes, for CI: 0 gate passed, 1 gate failed, 2 gate "
        "inconclusive (more cases needed), 3 bad input (policy, result or baseline), 4 "
        "internal error.",
    )
    parser.add_argument("result", help="the run to decide: a result JSON file or a run number")
    parser.add_argument("policy", help="release policy, e.g. release.yaml")
    parser.add_argument(
        "--baseline",
        metavar="RUN",
        help="the baseline, a result JSON file or a run number (overrides the policy's)",
    )
    parser.add_argument("--json", action="store_true", help="print the gate as JSON")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    gate = decide(args.result, args.policy, baseline=args.baseline or None)
    if args.json:
        print(json.dumps(gate.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(gate)
        for rule in gate.rules:
            print(f"  {rule.outcome:<12} {rule.rule}: {rule.reason}")
    return _exit_codes.for_gate_outcome(gate.outcome)
