"""`oloproof run config.yaml`: evaluate a system as a config file describes."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
from collections.abc import Callable

from oloproof._evaluate import evaluate
from oloproof._store import start_store_early
from oloproof.cli import _exit_codes
from oloproof.cli._progress import ProgressBar
from oloproof_core import (
    AUTO,
    ConfigError,
    Result,
    RunConfig,
    SandboxFloorError,
    check_judge_repeats,
    check_repeats,
    check_sandbox_support_early,
    config_files_check,
    is_auto,
    load_run_config,
)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "run",
        help="evaluate a system described by a run config (YAML)",
        description="Run the system over the dataset, judge every case, print the metrics "
        "and, with a policy, decide the gate. Exit codes: 0 passed (or no "
        "policy), 1 gate failed, 2 gate inconclusive, 3 bad input, 4 internal "
        "error, 5 a metric observed no case (its first error is printed). A recorded run "
        "ends with its number and dashboard page.",
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
        "--repeats",
        help="run each case K times, each an independent call; auto: 5 times the cases "
        "earlier runs found flaky, once the stable ones (overrides config; docs/repeats.md)",
        metavar="K",
    )
    parser.add_argument(
        "--judge-repeats",
        help="have each model judge judge each output J times, the score their mean "
        "(overrides config; docs/repeats.md)",
        metavar="J",
    )
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
    _where_it_runs(parser)
    parser.set_defaults(handler=handle)


def _where_it_runs(parser: argparse.ArgumentParser) -> None:
    """Options for how far and where a run goes: sequentially, or on the workers."""
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


def handle(args: argparse.Namespace) -> int:
    if args.wait and not args.submit:
        raise ConfigError("--wait follows a submitted run: use it with --submit")
    if args.until_decided and args.submit:
        raise ConfigError(
            "--until-decided runs here: it cannot be combined with --submit; on the "
            "workers, a policy with `sequential:` runs its first batch and "
            "`oloproof continue RUN` adds batches until the gate decides"
        )
    args.repeats = _count(args.repeats, "--repeats", "runs per case", check_repeats)
    args.judge_repeats = _count(
        args.judge_repeats, "--judge-repeats", "verdicts per output", check_judge_repeats
    )
    if args.submit:
        from oloproof.cli._submit import handle_submit

        return handle_submit(args)
    # User code (systems, evaluators, metric files) may print; with --json - its output
    # goes to stderr, so stdout carries only the JSON document.
    quiet = contextlib.redirect_stdout(sys.stderr) if args.json_path == "-" else None
    with quiet or contextlib.nullcontext():
        result = _evaluate(args)
    if args.json_path == "-":
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False, default=str))
    else:
        # The page's link is said last, on stderr, after the store it went to.
        extras = {k: v for k, v in result.extras.items() if k not in ("run_url", "run_url_hint")}
        print(dataclasses.replace(result, extras=extras))
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
    code = _exit_codes.for_gate_outcome(None if result.gate is None else result.gate.outcome)
    if report_unobserved(result, table_shown=args.json_path != "-"):
        code = _exit_codes.NOTHING_OBSERVED
    say_where_recorded(result)
    return code


def _count(
    text: str | None, flag: str, of_what: str, check: Callable[[object], int | str]
) -> int | str | None:
    """`--repeats K` (or auto) or `--judge-repeats J` as a number in its range, said of
    the flag, not the config."""
    if text is None:
        return None
    if flag == "--repeats" and is_auto(text):
        return AUTO
    try:
        return check(int(text))
    except ValueError:
        either = " or auto" if flag == "--repeats" else ""
        raise ConfigError(
            f"{flag} must be a whole number of {of_what}{either}, got {text!r}"
        ) from None
    except ConfigError as exc:  # "repeats must be ..." said of the flag
        raise ConfigError(f"{flag} {str(exc).split(' ', 1)[1]}") from None


def _evaluate(args: argparse.Namespace) -> Result:
    start_store_early()
    # The run's code is read, and its system run, in a sandbox: whether one can be made
    # here is checked beside the config's reading, not before the first sandbox starts.
    check_sandbox_support_early()
    config_files_check(args.config)
    try:
        return _evaluate_config(args, load_run_config(args.config, prefetch_dataset=True))
    except SandboxFloorError as exc:  # the file that lowers the operator's floor
        raise ConfigError(f"{args.config}: {exc}") from None


def _evaluate_config(args: argparse.Namespace, config: RunConfig) -> Result:
    return evaluate(
        config.system,
        config.dataset,
        config.evaluators,
        policy=config.policy,
        baseline=config.baseline,
        split=config.split,
        concurrency=args.concurrency or config.concurrency,
        timeout=config.timeout,
        evaluator_timeout=config.evaluator_timeout,
        repeats=config.repeats if args.repeats is None else args.repeats,
        judge_repeats=config.judge_repeats if args.judge_repeats is None else args.judge_repeats,
        confidence=config.confidence,
        progress=ProgressBar(enabled=args.progress),
        record=args.record,
        isolation=config.isolation,
        memory_limit_mb=config.memory_limit_mb,
        sandbox=config.sandbox,
        until_decided=args.until_decided,
        batch=args.batch,
        # The command shows figures, not cases: unless a result file asks for them,
        # the cases are recorded as the run goes and not kept.
        keep_cases=args.json_path is not None,
    )


def report_unobserved(result: Result, *, table_shown: bool = False) -> bool:
    """Say which metrics observed no case at all, with the first error behind each.

    An evaluator's error the table above already shows whole (a metric's contract, say)
    is named by its first line, so its block is printed once.
    """
    empty = [metric for metric in result.metrics if metric.n_observed == 0]
    if not result.cases or not empty:
        return False
    for metric in empty:
        case_id, error = first_error(result, metric.criterion)
        if table_shown and error.startswith("the evaluator failed: ") and "\n" in error:
            error = error.splitlines()[0] + " (the whole message is in the table above)"
        print(
            f"oloproof: error: {metric.metric!r} observed no case (all {metric.n_missing} "
            f"missing); first error, on case {case_id!r}:\n  {error}",
            file=sys.stderr,
        )
    return True


def first_error(result: Result, criterion: str) -> tuple[str, str]:
    """The first case whose verdict on `criterion` is missing, and why (system or evaluator)."""
    for case in result.cases:
        if case.error is not None:
            return case.id, f"the system raised {case.error.type}: {case.error.message}"
        verdict = case.verdicts.get(criterion)
        if verdict is not None and verdict.value is None:
            return case.id, f"the evaluator failed: {verdict.error or 'no reason given'}"
    return "?", "no error was recorded"


def say_where_recorded(result: Result) -> None:
    """`recorded run #N → <dashboard page>`, after the store it went to, as the last lines."""
    link = result.extras.get("run_url")
    if result.run_id is None or link is None:
        return
    from oloproof._store import store_location

    sys.stdout.flush()
    print(f"store: {store_location()}", file=sys.stderr)
    print(f"recorded run #{result.run_id} → {link}", file=sys.stderr)
