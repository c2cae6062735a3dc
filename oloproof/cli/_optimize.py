"""`oloproof optimize optimize.yaml [--submit [--wait]]`: search for a better release.

Here, the search runs in this process and reports each candidate as it is
recorded; with `--submit` it is queued for the workers (`--wait` follows it).
Exit codes as for `oloproof run`, from the winner's gate on test (the winner is the
seed when no candidate beat it, and is gated all the same).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Mapping
from typing import Any, TextIO

from oloproof._store import (
    default_ledger,
    default_store_on_use,
    hide_data_folder,
    start_store_early,
)
from oloproof.cli import _exit_codes
from oloproof_core import ConfigError, InMemoryStore

_POLL_INTERVAL_S = 0.5


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "optimize",
        help="optimize a system's components (or a DSPy program) within a budget",
        description="Search on the train and val splits for better component texts, stop at "
        "the first budget limit, then run the seed and the winner once on test and gate the "
        "winner (the seed, when nothing beat it). Exit codes: 0 passed (or no policy), 1 "
        "gate failed, 2 inconclusive, 3 bad input (found before any model call; or a metric "
        "that broke its contract, which stops the search), 4 internal error.",
    )
    parser.add_argument("config", help="optimization config file, e.g. optimize.yaml")
    parser.add_argument(
        "--json",
        metavar="PATH",
        dest="json_path",
        help="also write the outcome as JSON to PATH ('-' for stdout)",
    )
    parser.add_argument(
        "--record",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="record candidates and runs in the local store (default)",
    )
    parser.add_argument(
        "--submit",
        action="store_true",
        help="queue the optimization for the workers; prints its id",
    )
    parser.add_argument(
        "--wait",
        action="store_true",
        help="with --submit: follow its progress and print the outcome",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.wait and not args.submit:
        raise ConfigError("--wait follows a submitted optimization: use it with --submit")
    if args.submit:
        return _submit(args)
    # The optimizers are imported only by the commands that optimize.
    from oloproof_core.optimize import InMemoryLedger, load_optimize_config, run_optimization

    if args.record:  # hidden from the sandbox the config's system is declared in, too
        hide_data_folder()
        start_store_early()  # the store's process opens while the config is read
    spec = load_optimize_config(args.config)
    store = default_store_on_use() if args.record else InMemoryStore()
    ledger = default_ledger() if args.record else InMemoryLedger()
    result = run_optimization(
        spec=spec, store=store, ledger=ledger, progress=ProgressLines(sys.stderr)
    )
    outcome = {
        "optimization_id": result.optimization_id,
        "engine": result.engine,
        "winner": result.winner.to_dict(),
        "proof": result.proof,
        "budget_used": result.budget_used,
        "evaluations": result.evaluations,
    }
    _print(str(result), outcome, args)
    return _exit_codes.for_gate_outcome((result.gate or {}).get("outcome"))


class ProgressLines:
    """One line per event on stderr: each candidate with its val interval and the budget."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __call__(self, event: str, details: Mapping[str, Any]) -> None:
        self.stream.write(progress_line(event, details) + "\n")
        self.stream.flush()


def progress_line(event: str, details: Mapping[str, Any]) -> str:
    if event == "started":
        counts = details.get("splits") or {}
        return (
            f"optimization {details['optimization_id']}: engine {details['engine']}, "
            f"train {counts.get('train')} / val {counts.get('val')} / test "
            f"{counts.get('test')} cases (test held out)"
        )
    if event == "candidate":
        record, used = details["candidate"], details["budget_used"]
        return (
            f"candidate {record['index']} ({record['version']}): val "
            f"{val_figures(record['val'])} · {used['metric_calls']} metric calls · "
            f"${used['usd']:.4f} · {used['wall_time_s']:.1f} s"
        )
    if event == "proving":
        if details["winner"] == details["seed"]:
            return "search done; no candidate beat the seed: running it on test as the winner"
        return f"search done; running the seed (0) and the winner ({details['winner']}) on test"
    return "finished"


def val_figures(val: Mapping[str, Any]) -> str:
    """`0.750 [0.194, 0.994]`, or `missing (4 of 4 cases)` when no case was scored."""
    estimate, lower, upper = val.get("estimate"), val.get("lower"), val.get("upper")
    if estimate is None:
        missing, observed = val.get("n_missing") or 0, val.get("n") or 0
        return f"missing ({missing} of {missing + observed} cases)"
    bounds = "" if lower is None or upper is None else f" [{lower:.3f}, {upper:.3f}]"
    return f"{estimate:.3f}{bounds}"


def _print(text: str, outcome: Mapping[str, Any], args: argparse.Namespace) -> None:
    if args.json_path == "-":
        print(json.dumps(outcome, indent=2, default=str))
        return
    print(text)
    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as handle:
            json.dump(outcome, handle, indent=2, default=str)


def _submit(args: argparse.Namespace) -> int:
    import yaml

    from oloproof.cli._django import django_ready
    from oloproof_core.optimize import load_optimize_config

    load_optimize_config(args.config)  # imports and loads everything once, here
    with open(args.config, encoding="utf-8") as handle:
        raw = yaml.safe_load(handle)
    django_ready()
    from runs.services import optimization_submit

    record = optimization_submit(config=raw, base_dir=os.path.dirname(os.path.abspath(args.config)))
    print(
        record.pk if not args.wait else f"optimization {record.pk} queued",
        file=sys.stdout if not args.wait else sys.stderr,
    )
    if not args.wait:
        return _exit_codes.OK
    return _wait(record.pk, args)


def _wait(optimization_id: int, args: argparse.Namespace) -> int:
    from runs.access import LOCAL
    from runs.selectors.optimizations import optimization_get

    shown: tuple[str, int] = ("", -1)
    while True:
        record = optimization_get(user=LOCAL, optimization_id=optimization_id)
        used = (record.progress or {}).get("budget_used") or {}
        now = (record.status, int(used.get("metric_calls", 0)))
        if now != shown:
            shown = now
            print(
                f"optimization {optimization_id}: {record.status} · "
                f"{(record.progress or {}).get('candidates', 0)} candidates · "
                f"{now[1]} metric calls",
                file=sys.stderr,
                flush=True,
            )
        if record.is_finished:
            break
        time.sleep(_POLL_INTERVAL_S)
    if record.status == "failed":
        print(f"oloproof: optimization {optimization_id} failed: {record.error}", file=sys.stderr)
        return _exit_codes.BAD_INPUT
    proof = (record.outcome or {}).get("proof") or {}
    _print(json.dumps(proof, indent=2, default=str), record.outcome, args)
    return _exit_codes.for_gate_outcome((proof.get("gate") or {}).get("outcome"))
