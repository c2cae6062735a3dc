"""`oloproof run config.yaml --submit [--wait]`: queue a run for the workers.

The config is checked here first (its system and evaluators import, its dataset
loads), so a mistake shows at once rather than in a worker's log. The dataset is
recorded with the run, so the workers read its cases from the database; they load
the system and evaluators from the config's folder, as recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, TextIO

from oloproof.cli import _exit_codes
from oloproof.cli._django import django_ready
from oloproof_core import load_dataset, load_run_config

_POLL_INTERVAL_S = 0.5
_NO_WORKER_HINT_AFTER_S = 10.0


def handle_submit(args: argparse.Namespace) -> int:
    config = load_run_config(args.config)
    dataset = load_dataset(config.dataset, split=config.split)
    raw: dict[str, Any] = dict(config.raw)
    if args.concurrency:
        raw["concurrency"] = args.concurrency
    django_ready()
    from runs.services import run_submit

    base_dir = os.path.dirname(os.path.abspath(args.config))
    run = run_submit(config=raw, base_dir=base_dir, dataset=dataset)
    if not args.wait:
        print(run.pk)
        print(
            f"run {run.pk} queued ({len(dataset):,} cases); follow it with "
            f"`oloproof run {args.config} --submit --wait` or on the dashboard",
            file=sys.stderr,
        )
        return _exit_codes.OK
    print(f"run {run.pk} queued ({len(dataset):,} cases)", file=sys.stderr, flush=True)
    return _wait(run.pk, args, sys.stderr)


def _wait(run_id: int, args: argparse.Namespace, log: TextIO) -> int:
    from runs.access import LOCAL
    from runs.selectors.results import run_result
    from runs.selectors.runs import run_get, run_progress

    started = time.monotonic()
    hinted = False
    shown: tuple[str | None, int] = (None, -1)
    while True:
        progress = run_progress(user=LOCAL, run_id=run_id)
        if (progress["status"], progress["cases_done"]) != shown:
            shown = (progress["status"], progress["cases_done"])
            print(
                f"run {run_id}: {progress['status']} {progress['cases_done']:,}/"
                f"{progress['cases_total']:,} cases",
                file=log,
            )
            log.flush()
        if progress["finished"]:
            break
        waited = time.monotonic() - started
        if progress["status"] == "queued" and waited > _NO_WORKER_HINT_AFTER_S and not hinted:
            hinted = True
            print(
                "no worker has taken the run yet: start one with `oloproof worker` "
                "(or `oloproof serve`), using the same data folder or DATABASE_URL and broker",
                file=log,
            )
        time.sleep(_POLL_INTERVAL_S)
    if progress["status"] == "failed":
        print(f"oloproof: run {run_id} failed: {progress['error']}", file=sys.stderr)
        return _exit_codes.BAD_INPUT
    return _print_result(run_result(run=run_get(user=LOCAL, run_id=run_id)), args)


def _print_result(result: Any, args: argparse.Namespace) -> int:
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
    return _exit_codes.for_gate_outcome(None if gate is None else gate.get("outcome"))
