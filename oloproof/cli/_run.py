"""`oloproof run config.yaml`: evaluate a system as a config file describes."""

from __future__ import annotations

import argparse
import json
import sys

from oloproof._evaluate import evaluate
from oloproof.cli import _exit_codes
from oloproof.cli._progress import ProgressBar
from oloproof_core import ConfigError, load_result, load_run_config


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "run",
        help="evaluate a system described by a run config (YAML)",
        description="Run the system over the dataset, judge every case, print the metrics "
        "and, with a policy, decide the gate. Exit codes: 0 passed (or no "
        "policy), 1 gate failed, 2 gate inconclusive, 3 bad input, 4 internal "
        "error.",
    )
    parser.add_argument("config", help="run config file, e.g. oloproof.yaml")
    parser.add_argument(
        "--json",
        metavar="PATH",
        dest="json_path",
        help="also write the full result as JSON to PATH ('-' for stdout)",
    )
    parser.add_argument("--concurrency", type=int, help="cases run at once (overrides config)")
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar (default: when stderr is a terminal)",
    )
    parser.add_argument(
        "--record",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="record the run in the local store for the dashboard (default; "
        "OLOPROOF_RECORD=0 also keeps the verdict cache in memory)",
    )
    parser.add_argument(
        "--until-decided",
        action="store_true",
        help="add cases in batches (order fixed by case ids) until the gate decides or the "
        "cases run out; the gate reads anytime-valid intervals (docs/policy.md)",
    )
    parser.add_argument(
        "--batch", type=int, help="with --until-decided: cases per batch (default: policy's, 50)"
    )
    parser.add_argument(
        "--submit",
        action="store_true",
        help="queue the run for the workers instead of running it here; prints the run id",
    )
    parser.add_argument(
        "--wait",
        action="store_true",
        help="with --submit: follow the run's progress and print its result",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.wait and not args.submit:
        raise ConfigError("--wait follows a submitted run: use it with --submit")
    if args.until_decided and args.submit:
        raise ConfigError("--until-decided runs here: it cannot be combined with --submit")
    if args.submit:
        from oloproof.cli._submit import handle_submit

        return handle_submit(args)
    config = load_run_config(args.config)
    baseline = load_result(config.baseline) if config.baseline else None
    result = evaluate(
        config.system,
        config.dataset,
        config.evaluators,
        policy=config.policy,
        baseline=baseline,
        split=config.split,
        concurrency=args.concurrency or config.concurrency,
        timeout=config.timeout,
        confidence=config.confidence,
        progress=ProgressBar(enabled=args.progress),
        record=args.record,
        until_decided=args.until_decided,
        batch=args.batch,
    )
    if args.json_path == "-":
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False, default=str))
    else:
        print(result)
        sequential = result.provenance.get("sequential")
        if sequential:
            print(
                f"\nsequential: {sequential['n_run']} of {sequential['horizon']} cases run "
                f"in {sequential['looks']} looks",
                file=sys.stderr,
            )
        if args.json_path:
            result.to_json(args.json_path)
            print(f"\nresult written to {args.json_path}", file=sys.stderr)
    return _exit_codes.for_gate_outcome(None if result.gate is None else result.gate.outcome)
