"""Every figure of "a million cases across workers" from one run of one command.

    .venv/bin/python -m bench.scale_all [--quick] [--only STEP ...]
        [--postgres postgresql://postgres@127.0.0.1:5432] [--redis redis://127.0.0.1:6379/9]
        [--efficiency-target 0.7] [--out bench/results/scale_all.json]

Runs in sequence, each in child processes of the existing benchmarks (bench/scale_all/
_steps.py): the conclusion's memory at 100,000 and 1,000,000 cases (`bench.scale`);
planning's statements (`bench.scale_workers --planning`); recording 100,000 cases on
PostgreSQL against a raw COPY (`bench.record`); the submitting process's peak memory at
100,000 and 1,000,000 cases (`bench.submit_memory`'s measurement); the I/O-bound run of
100,000 cases on 1, 2, 4, 8 workers and the trivial run of 1,000,000 on 1, 2, 4
(`bench.scale_workers`); two fault runs at 1,000,000 cases, a worker SIGKILLed and the
broker restarted after 30 % and after 70 % of the chunks; and the pages' server times
with 10,000 runs and two runs of 1,000,000 cases (`bench.scale_pages`).

Writes one JSON file (the git commit, start and end, seconds, the load averages before
and after each step, every step's figures) and the same as markdown tables with each
target checked (the .md beside it), printed at the end. A step that fails is recorded
with its output's end, and the next step runs; the exit status is then 1.
`--quick` uses small sizes (bench/scale_all/_steps.py, QUICK) to try the whole pipeline.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.scale_all._report import EFFICIENCY_TARGET, markdown
from bench.scale_all._steps import FULL, QUICK, STEP_NAMES, Command, Step, steps

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "bench" / "results"
TAIL_LINES = 60
"""Lines of a failed command's output kept in the report."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _load() -> list[float]:
    return [round(value, 2) for value in os.getloadavg()]


def _git(*arguments: str) -> str:
    completed = subprocess.run(
        ["git", *arguments], cwd=REPO, capture_output=True, text=True, check=False
    )
    return completed.stdout.strip()


def _run_command(command: Command, folder: Path) -> dict[str, Any]:
    """Run one child, its output shown as it comes; its figures read from its --out file."""
    out = folder / f"{command.module}-{time.time_ns()}.json"
    argv = command.argv(str(out))
    print(f"\n$ {' '.join(argv[1:])}", flush=True)
    tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
    started = time.perf_counter()
    child = subprocess.Popen(
        argv,
        cwd=REPO,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert child.stdout is not None
    for line in child.stdout:
        print(f"  | {line}", end="", flush=True)
        tail.append(line.rstrip("\n"))
    returncode = child.wait()
    record: dict[str, Any] = {
        "label": command.label,
        "command": " ".join(["python", *argv[1:-2]]),
        "params": command.params,
        "seconds": round(time.perf_counter() - started, 1),
        "returncode": returncode,
    }
    if returncode == 0 and out.exists():
        record["result"] = json.loads(out.read_text(encoding="utf-8"))
    else:
        record["output_tail"] = list(tail)
    return record


def run_step(step: Step) -> dict[str, Any]:
    """A step's commands in turn (stopping at the first that fails), timed, with the load."""
    print(f"\n== {step.name}: {step.title}", flush=True)
    record: dict[str, Any] = {"name": step.name, "title": step.title, "started": _now()}
    record["load_before"] = _load()
    started = time.perf_counter()
    commands = []
    with tempfile.TemporaryDirectory(prefix="oloproof-scale-all-") as folder:
        for command in step.commands:
            commands.append(_run_command(command, Path(folder)))
            if commands[-1]["returncode"] != 0:
                break
    record.update(
        seconds=round(time.perf_counter() - started, 1),
        load_after=_load(),
        ok=all(c["returncode"] == 0 for c in commands) and len(commands) == len(step.commands),
        commands=commands,
    )
    print(f"== {step.name}: {'done' if record['ok'] else 'FAILED'} in {record['seconds']} s")
    return record


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.scale_all", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke test")
    parser.add_argument("--only", nargs="+", choices=STEP_NAMES, metavar="STEP")
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/9")
    parser.add_argument("--efficiency-target", type=float, default=EFFICIENCY_TARGET)
    parser.add_argument("--out", help="default bench/results/scale_all[_quick][_partial].json")
    return parser.parse_args()


def _out_path(args: argparse.Namespace) -> Path:
    """A smoke test or a partial run never overwrites the full run's file by default."""
    if args.out:
        return Path(args.out)
    suffix = ("_quick" if args.quick else "") + ("_partial" if args.only else "")
    return RESULTS / f"scale_all{suffix}.json"


def _header(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "command": " ".join(["python -m bench.scale_all", *sys.argv[1:]]),
        "quick": args.quick,
        "sizes": (QUICK if args.quick else FULL).__dict__,
        "efficiency_target": args.efficiency_target,
        "commit": _git("rev-parse", "HEAD"),
        "tracked_files_modified": bool(_git("status", "--porcelain", "--untracked-files=no")),
        "machine": f"{platform.node()}, {os.cpu_count()} cores, {platform.platform()}",
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "started": _now(),
        "load_before": _load(),
    }


def _save(report: dict[str, Any], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def main() -> int:
    args = _arguments()
    out = _out_path(args)
    report = _header(args)
    all_steps = steps(QUICK if args.quick else FULL, postgres=args.postgres, redis=args.redis)
    chosen = [step for step in all_steps if not args.only or step.name in args.only]
    started = time.perf_counter()
    report["steps"] = []
    for step in chosen:
        report["steps"].append(run_step(step))
        _save(report, out)  # kept step by step: a later failure loses nothing
    report.update(ended=_now(), seconds=round(time.perf_counter() - started, 1))
    report["load_after"] = _load()
    text, checks = markdown(report)
    report["checks"] = checks
    # A fault run that lost or doubled a case is a failure, not a missed target.
    report["ok"] = all(step["ok"] for step in report["steps"]) and all(
        check["ok"] for check in checks if check["section"] == "faults"
    )
    _save(report, out)
    out.with_suffix(".md").write_text(text, encoding="utf-8")
    print("\n" + text, flush=True)
    print(f"written: {out.relative_to(REPO) if out.is_relative_to(REPO) else out} and .md")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
