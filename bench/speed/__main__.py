"""Whole-process speed against a plain loop doing the same work, side by side.

Every workload runs as fresh processes, the plain loop (A) and `oloproof` (B) in turns
A B A B, and reports each side's median, their ratio and the larger peak RSS (of the
process and the children it waited for). The plain loops are in bench/speed/workloads.py:
they read the JSONL file, call the same function, compare the label and write each
case's row into SQLite with `executemany`. `oloproof run` records into a migrated
embedded store copied fresh for every repetition ("store made"), or into an empty data
folder ("store new": the store is made on first use, from the schema template this
machine's first store left in the user's cache), so no run reads another's cache (except
the cached re-run, which is the point of that one). A 10-case run stands for a run's
fixed cost.

Bytecode: the processes compile into a private cache (PYTHONPYCACHEPREFIX) warmed before
measuring, as an installed package would be; PYTHONDONTWRITEBYTECODE is dropped.

DeepEval and promptfoo, where they are installed in environments of their own (see
bench/speed/others.py), run the 10,000-case workload in the same run, each in turns
with the plain loop.

Run: .venv/bin/python -m bench.speed [--repeats 2] [--skip-100k]
     [--deepeval PYTHON] [--promptfoo COMMAND] [--others-repeats N] [--others-limit S]
Writes bench/results/speed.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.speed.others import against_plain_loop, tool_commands
from bench.speed.workloads import write_dataset

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"
CONFIG = """system: bench.speed.workloads:{system}
dataset: {dataset}
evaluators:
{evaluators}
isolation: {isolation}
{concurrency}"""
EXACT = "  - ExactMatch: {criterion: label, field: label}"


def measure(command: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Wall seconds and peak RSS (MB) of one process, its waited children included."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if process.returncode not in (0, 1, 2):
            failure = err.read().decode()
            raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{failure}")
        return {
            "seconds": seconds,
            "cpu_s": usage.ru_utime + usage.ru_stime,
            "rss_mb": usage.ru_maxrss / 1024,
            "stdout": out.read().decode(),
        }


class Bench:
    def __init__(self, folder: Path, repeats: int) -> None:
        self.folder = folder
        self.repeats = repeats
        self.env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        self.env |= {
            "PYTHONPYCACHEPREFIX": str(folder / "pycache"),
            "PYTHONPATH": str(ROOT),
            "OLOPROOF_RECORD": "1",
        }
        self.env.pop("DATABASE_URL", None)
        self.template = folder / "store-template"
        self.copies = 0

    def fresh_store(self, *, new: bool = False) -> Path:
        """A copy of a migrated, empty embedded store; `new`: an empty data folder."""
        self.copies += 1
        target = self.folder / f"store-{self.copies}"
        if new:
            target.mkdir()
        else:
            shutil.copytree(self.template, target)
        return target

    def oloproof(self, config: Path, *extra: str) -> list[str]:
        return [sys.executable, "-m", "oloproof", "run", str(config), *extra]

    def run(
        self, command: list[str], store: Path | None = None, *, new: bool = False
    ) -> dict[str, Any]:
        env = dict(self.env)
        env["OLOPROOF_DATA_DIR"] = str(store or self.fresh_store(new=new))
        return measure(command, env)

    def side_by_side(self, plain: Any, ours: Any, repeats: int | None = None) -> dict[str, Any]:
        """A B A B …: `plain()` and `ours()` return a measurement each."""
        pairs = [(plain(), ours()) for _ in range(repeats or self.repeats)]
        a = [p["seconds"] for p, _ in pairs]
        b = [o["seconds"] for _, o in pairs]
        a_cpu = [p["cpu_s"] for p, _ in pairs]
        b_cpu = [o["cpu_s"] for _, o in pairs]
        return {
            "plain_s": round(statistics.median(a), 3),
            "oloproof_s": round(statistics.median(b), 3),
            "ratio": round(statistics.median(o / p for p, o in zip(a, b, strict=True)), 2),
            # CPU seconds (user + system, children included) move far less with the
            # neighbours' load than wall time does.
            "plain_cpu_s": round(statistics.median(a_cpu), 3),
            "oloproof_cpu_s": round(statistics.median(b_cpu), 3),
            "oloproof_rss_mb": round(max(o["rss_mb"] for _, o in pairs), 1),
            "plain_rss_mb": round(max(p["rss_mb"] for p, _ in pairs), 1),
            "runs": [[round(x, 3), round(y, 3)] for x, y in zip(a, b, strict=True)],
        }


def write_config(folder: Path, name: str, **fields: Any) -> Path:
    # Sync systems get the default number of processes (twice the CPUs, at most 16).
    defaults = {"evaluators": EXACT, "concurrency": "", "isolation": "process"}
    path = folder / f"{name}.yaml"
    path.write_text(CONFIG.format(**(defaults | fields)))
    return path


def prepare(bench: Bench, sizes: list[int]) -> dict[int, Path]:
    folder = bench.folder
    datasets = {n: write_dataset(folder / f"cases-{n}.jsonl", n) for n in sizes}
    write_dataset(folder / "cases-500.jsonl", 500)
    # The template store: migrated once, then copied; also warms the bytecode cache. Its
    # one run judges another criterion, so no timed first run finds its verdicts cached.
    bench.template.mkdir()
    warm = write_config(
        folder,
        "warm",
        system="classify",
        dataset=datasets[1000].name,
        evaluators="  - ExactMatch: {criterion: warm, field: label}",
    )
    bench.run(bench.oloproof(warm), store=bench.template)  # its one run stays in the copies
    return datasets


def plain_command(kind: str, dataset: Path, database: Path) -> list[str]:
    return [sys.executable, "-m", "bench.speed.workloads", kind, str(dataset), str(database)]


def workloads(bench: Bench, datasets: dict[int, Path], skip_100k: bool) -> dict[str, Any]:
    folder = bench.folder
    python = sys.executable
    figures: dict[str, Any] = {}
    figures["import oloproof"] = bench.side_by_side(
        lambda: bench.run([python, "-c", "pass"]),
        lambda: bench.run([python, "-c", "import oloproof"]),
    )
    for n in [n for n in datasets if not (skip_100k and n == 100_000)]:
        figures |= recorded_runs(bench, n, datasets[n])
    sleeper = write_config(
        folder,
        "sleeper",
        system="sleeper",
        dataset="cases-500.jsonl",
        concurrency="concurrency: 16",
    )
    figures["500 × 20 ms, c=16, recorded"] = bench.side_by_side(
        lambda: bench.run(
            plain_command("plain-async", folder / "cases-500.jsonl", folder / "a.db")
        ),
        lambda: bench.run(bench.oloproof(sleeper)),
    )
    figures["cached re-run 1,000"] = cached_rerun(bench, datasets[1000])
    figures["1,000 × 5 ms evaluator, c=16"] = waiting_evaluator(bench, datasets[1000])
    figures["1,000 × 5 ms evaluator, c=16"]["in_process"] = judging_in_process(
        datasets[1000], bench.repeats
    )
    return figures


def recorded_runs(bench: Bench, n: int, dataset: Path) -> dict[str, Any]:
    """`oloproof run` of `n` cases against the plain loop: store made, then store new."""
    config = write_config(bench.folder, f"run-{n}", system="classify", dataset=dataset.name)
    database = bench.folder / f"plain-{n}.sqlite3"
    figures = {}
    for name, new in (("recorded", False), ("recorded, store new", True)):
        figures[f"run {n:,} {name}"] = bench.side_by_side(
            lambda: bench.run(plain_command("plain", dataset, database)),
            lambda new=new: bench.run(bench.oloproof(config), new=new),
            repeats=1 if n == 100_000 else None,
        )
    if n < 100_000:  # what the timed runs did: no verdict from an earlier run
        store = bench.fresh_store()
        bench.run(bench.oloproof(config), store=store)
        figures[f"run {n:,} recorded"]["judging"] = _last_run_judging(store)["label"]
    if n == 10:  # the fixed cost: the run's time beyond the plain loop's start and work
        for row in (figures["run 10 recorded"], figures["run 10 recorded, store new"]):
            row["fixed_s"] = round(row["oloproof_s"] - row["plain_s"], 3)
    return figures


def cached_rerun(bench: Bench, dataset: Path) -> dict[str, Any]:
    """The same command run again on the same store: every verdict from the cache.

    Timed as the first run is (the command prints its figures); the judging tally is
    read from the recorded run's provenance. The same re-run with `--json -`, which
    also keeps every case and prints it, is timed beside it."""
    config = write_config(bench.folder, "cached", system="classify", dataset=dataset.name)
    plain_db = bench.folder / "plain-cached.sqlite3"
    calls: list[dict[str, int]] = []

    def second_run(*extra: str) -> dict[str, Any]:
        store = bench.fresh_store()
        bench.run(bench.oloproof(config), store=store)
        timed = bench.run(bench.oloproof(config, *extra), store=store)
        calls.append(_last_run_judging(store)["label"])
        return timed

    figures = bench.side_by_side(
        lambda: bench.run(plain_command("plain", dataset, plain_db)), second_run
    )
    figures["judging_of_the_re_run"] = calls[-1]
    with_json = bench.side_by_side(
        lambda: bench.run(plain_command("plain", dataset, plain_db)),
        lambda: second_run("--json", "-"),
    )
    figures["with_json_output"] = {
        key: with_json[key] for key in ("plain_s", "oloproof_s", "ratio", "oloproof_cpu_s")
    }
    figures["with_json_output"]["judging_of_the_re_run"] = calls[-1]
    return figures


def _last_run_judging(store: Path) -> dict[str, dict[str, int]]:
    connection = sqlite3.connect(store / "oloproof.sqlite3")
    try:
        (provenance,) = connection.execute(
            "SELECT provenance FROM runs_run ORDER BY id DESC LIMIT 1"
        ).fetchone()
    finally:
        connection.close()
    judging: dict[str, dict[str, int]] = json.loads(provenance)["judging"]
    return judging


def waiting_evaluator(bench: Bench, dataset: Path) -> dict[str, Any]:
    """Whole process with the 5 ms evaluator, less the same run with ExactMatch only."""
    slow = "  - bench.speed.workloads:slow_check"
    with_judge = write_config(
        bench.folder,
        "slow",
        system="classify",
        dataset=dataset.name,
        evaluators=slow,
        isolation="thread",
    )
    without = write_config(
        bench.folder,
        "fast",
        system="classify",
        dataset=dataset.name,
        isolation="thread",
    )
    # 16 cases judged at once; the trivial system keeps its default threads.
    bench.env["OLOPROOF_JUDGE_CONCURRENCY"] = "16"
    try:
        figures = bench.side_by_side(
            lambda: bench.run(bench.oloproof(without)),
            lambda: bench.run(bench.oloproof(with_judge)),
        )
    finally:
        del bench.env["OLOPROOF_JUDGE_CONCURRENCY"]
    ideal = 1000 * 0.005 / 16
    judging = figures["oloproof_s"] - figures["plain_s"]
    figures |= {"judging_s": round(judging, 3), "ideal_s": ideal, "over_ideal": judging / ideal}
    figures["over_ideal"] = round(figures["over_ideal"], 2)
    return figures


def judging_in_process(dataset: Path, repeats: int) -> dict[str, Any]:
    """The 5 ms evaluator's share measured inside one process, where start-up noise is
    absent: the same evaluate() with and without it, A B A B, at 16 cases at once."""
    from bench.speed.workloads import classify, slow_check
    from oloproof import evaluate
    from oloproof.evaluators import ExactMatch
    from oloproof_core import InMemoryStore

    os.environ["OLOPROOF_JUDGE_CONCURRENCY"] = "16"
    exact = ExactMatch(criterion="label", field="label")
    shares = []
    for _ in range(repeats + 1):  # the first pair warms imports up and is dropped
        timings = []
        for evaluators in ([exact], [exact, slow_check]):
            started = time.perf_counter()
            evaluate(classify, str(dataset), evaluators, store=InMemoryStore(), isolation="thread")
            timings.append(time.perf_counter() - started)
        shares.append(timings[1] - timings[0])
    judging = statistics.median(shares[1:])
    ideal = 1000 * 0.005 / 16
    return {
        "judging_s": round(judging, 3),
        "ideal_s": ideal,
        "over_ideal": round(judging / ideal, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.speed", description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-100k", action="store_true")
    parser.add_argument(
        "--output",
        type=Path,
        help="where the figures go (default bench/results/speed.json; a run with "
        "--skip-100k defaults to bench/results/speed-partial.json, so that it never "
        "replaces the full run bench/README.md quotes)",
    )
    parser.add_argument("--deepeval", help="the Python of an environment with deepeval")
    parser.add_argument("--promptfoo", help="the promptfoo command")
    parser.add_argument(
        "--others-repeats", type=int, help="pairs for DeepEval and promptfoo (default --repeats)"
    )
    parser.add_argument(
        "--others-limit",
        type=float,
        default=1200,
        help="seconds a DeepEval or promptfoo run may take",
    )
    args = parser.parse_args()
    # The machine may be shared: its load is part of the figures.
    load = {"load_average_at_start": round(os.getloadavg()[0], 2)}
    with tempfile.TemporaryDirectory(prefix="oloproof-speed-") as scratch:
        bench = Bench(Path(scratch), args.repeats)
        datasets = prepare(bench, [10, 1000, 10_000, 100_000])
        figures: dict[str, Any] = workloads(bench, datasets, args.skip_100k)
        tools = tool_commands(datasets[10_000], bench.folder, args.deepeval, args.promptfoo)
        others = against_plain_loop(
            datasets[10_000],
            bench.folder,
            tools,
            args.others_repeats or args.repeats,
            args.others_limit,
        )
    load["load_average_at_end"] = round(os.getloadavg()[0], 2)
    print(load)
    RESULTS.mkdir(exist_ok=True)
    kept = load | figures | ({"others at 10,000": others} if others else {})
    output = args.output or RESULTS / ("speed-partial.json" if args.skip_100k else "speed.json")
    output.write_text(json.dumps(kept, indent=2) + "\n")
    print(f"figures written to {output}")
    print(
        f"{'workload':<32} {'plain s':>8} {'oloproof s':>10} {'ratio':>6} "
        f"{'plain cpu':>9} {'oloproof cpu':>12} {'peak MB':>8}"
    )
    for name, row in figures.items():
        print(
            f"{name:<32} {row['plain_s']:>8} {row['oloproof_s']:>10} {row['ratio']:>6} "
            f"{row['plain_cpu_s']:>9} {row['oloproof_cpu_s']:>12} {row['oloproof_rss_mb']:>8}"
        )
    for name, row in others.items():
        tool_s = row["tool_s"] or f"> {row['tool_s_at_least']}"
        print(f"{name + ' 10,000':<32} {row['plain_s']:>8} {tool_s:>10} {row['ratio']!s:>6}")
    print(json.dumps({k: v for k, v in figures.items() if "evaluator" in k or "cached" in k}))


if __name__ == "__main__":
    main()
