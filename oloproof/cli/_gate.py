"""`oloproof gate result.json release.yaml`: decide (again) a recorded run under a policy."""

from __future__ import annotations

import argparse
import json

from oloproof.cli import _exit_codes
from oloproof_core import load_result
from oloproof_core.gates import load_policy


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "gate",
        help="decide a recorded run under a release policy",
        description="Apply a release policy (release.yaml) to a result file written by "
        "'oloproof run --json'. Exit codes, for CI: 0 gate passed, 1 gate failed, 2 gate "
        "inconclusive (more cases needed), 3 bad input (policy, result or baseline), 4 "
        "internal error.",
    )
    parser.add_argument("result", help="result JSON of the run to decide")
    parser.add_argument("policy", help="release policy, e.g. release.yaml")
    parser.add_argument(
        "--baseline", metavar="PATH", help="result JSON of the baseline (overrides the policy's)"
    )
    parser.add_argument("--json", action="store_true", help="print the gate as JSON")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    policy = load_policy(args.policy)
    result = load_result(args.result)
    baseline = load_result(args.baseline) if args.baseline else None
    gate = policy.decide(result, baseline=baseline)
    if args.json:
        print(json.dumps(gate.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(gate)
        for rule in gate.rules:
            print(f"  {rule.outcome:<12} {rule.rule}: {rule.reason}")
    return _exit_codes.for_gate_outcome(gate.outcome)
