"""`oloproof plan release.yaml`: the cases a policy needs for 80 % power at a stated effect."""

from __future__ import annotations

import argparse
import json

from oloproof.cli import _exit_codes
from oloproof_core import ConfigError


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "plan",
        help="cases a release policy needs for 80 %% power",
        description="For each rule of a release policy, the number of cases with which it "
        "passes with 80 % probability when the truth sits a stated effect beyond its "
        "threshold (docs/policy.md, 'Planning'). Exit codes: 0 planned, 3 bad input, 4 "
        "internal error.",
    )
    parser.add_argument("policy", help="release policy, e.g. release.yaml")
    parser.add_argument(
        "--baseline",
        metavar="RUN",
        help="the baseline run: a result JSON file or a recorded run's number",
    )
    parser.add_argument(
        "--result",
        metavar="RUN",
        help="a pilot run of the candidate: a result JSON file or a recorded run's number "
        "(an undecided gate's run: its gate says this plan's figure)",
    )
    parser.add_argument(
        "--effect",
        type=float,
        help="distance of the truth beyond each threshold, a share of the range "
        "(default: the policy's effect, 0.05; no_regression: its margin)",
    )
    parser.add_argument(
        "--until-decided",
        action="store_true",
        help="plan for the anytime-valid gate of 'oloproof run --until-decided' (a policy "
        "with 'sequential:' is planned that way anyway)",
    )
    parser.add_argument(
        "--batch", type=int, help="cases per look of a sequential gate (default: the policy's, 50)"
    )
    parser.add_argument("--json", action="store_true", help="print the plan as JSON")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from oloproof._plan import plan  # the statistics: only when planning
    from oloproof._results import load

    if args.effect is not None and not 0 < args.effect < 1:
        raise ConfigError(f"--effect must be between 0 and 1 (e.g. 0.05), got {args.effect}")
    if args.batch is not None and args.batch < 1:
        raise ConfigError(f"--batch must be a whole number of cases, at least 1, got {args.batch}")
    planned = plan(
        args.policy,
        result=load(args.result) if args.result else None,
        baseline=load(args.baseline) if args.baseline else None,
        effect=args.effect,
        sequential=True if args.until_decided or args.batch is not None else None,
        batch=args.batch,
    )
    print(json.dumps(planned.to_dict(), indent=2) if args.json else planned)
    return _exit_codes.OK
