"""Isolation: (a) 100,000 trivial sync cases in processes vs threads, (b) async,
(c) the same 100,000 cases with the sandbox on vs off, (d) a sandboxed process's start.

(a) runs the same evaluate() as bench.engine (a JSONL file, a trivial classifier,
ExactMatch, in-memory store, recording off) once with `isolation="process"` (the
default) and once with `isolation="thread"`, in the same process. (b) runs 2,000
cases of an async system sleeping 20 ms at concurrency 64 in its own process. Each
figure of (a) and (b) is the best of three repetitions; the systems live at the top
of this module, so the child processes import them by reference.

(c) runs (a)'s process-isolated evaluate() with `sandbox="required"` and with
`sandbox="off"`, interleaved (on, off, on, off, ...), and reports each side's best and
median and the median of the pairs' on/off ratios. (d) times `MeteredPool.start(1)`
(one system process spawned, its system imported and warmed, ready for a case) with
the sandbox on and off, interleaved, and the first-use probe `sandbox_support()`.

Run: .venv/bin/python -m bench.isolation [--only a,b,c,d] [--cases 100000]
     [--async-cases 2000] [--pairs 3] [--starts 15]
Merges its figures into bench/results/isolation.json (the keys of workloads not run
are kept).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from oloproof import evaluate, system
from oloproof.evaluators import ExactMatch
from oloproof_core import InMemoryStore

RESULTS = Path(__file__).resolve().parents[1] / "results"
REPEATS = 3
WORKLOADS = ("a", "b", "c", "d")
LABEL = [ExactMatch(criterion="label", field="label")]


@system(name="bench-bot", version="1")
def classify(case):
    return {"label": "refund" if "refund" in case["question"] else "other"}


@system(name="bench-sleeper", version="1")
async def sleeper(case):
    await asyncio.sleep(0.02)
    return {"label": "other"}


def rows(n: int) -> list[dict]:
    return [
        {
            "id": f"case-{i}",
            "input": {"question": f"refund please #{i}" if i % 2 else f"where is it #{i}"},
            "expected": {"label": "refund" if i % 2 else "other"},
        }
        for i in range(n)
    ]


def best_of(work) -> tuple[float, Any]:
    timings, result = [], None
    for _ in range(REPEATS):
        started = time.perf_counter()
        result = work()
        timings.append(time.perf_counter() - started)
    return min(timings), result


def cases_file(n: int) -> Path:
    """(a)'s and (c)'s dataset: `n` rows in a JSONL file."""
    path = Path(tempfile.mkdtemp()) / "cases.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for row in rows(n):
            handle.write(json.dumps(row) + "\n")
    return path


def workload_a(path: Path, n: int, concurrency: int | None) -> dict:
    figures: dict[str, Any] = {"cases": n}
    for isolation in ("process", "thread"):
        seconds, result = best_of(
            lambda isolation=isolation: evaluate(
                classify,
                str(path),
                LABEL,
                store=InMemoryStore(),
                record=False,
                isolation=isolation,
                concurrency=concurrency,
            )
        )
        assert result.metric("label").n_observed == n
        figures[isolation] = {
            "seconds": round(seconds, 3),
            "cases_per_s": round(n / seconds),
            "execution": result.provenance["execution"],
        }
    figures["process_over_thread"] = round(
        figures["process"]["seconds"] / figures["thread"]["seconds"], 2
    )
    return figures


def workload_b(n: int, concurrency: int) -> dict:
    data = rows(n)
    wall, result = best_of(
        lambda: evaluate(
            sleeper, data, LABEL, store=InMemoryStore(), record=False, concurrency=concurrency
        )
    )
    assert result.provenance["execution"]["isolation"] == "process"
    ideal = n * 0.02 / concurrency
    return {
        "cases": n,
        "sleep_ms": 20,
        "concurrency": concurrency,
        "wall_s": round(wall, 3),
        "ideal_s": round(ideal, 3),
        "ratio_to_ideal": round(wall / ideal, 3),
    }


def workload_b_warm(n: int, concurrency: int) -> dict:
    """(b) with the system's process started and warmed before the clock starts."""
    # Imported here so the system's process, which imports this module, stays light.
    from oloproof_core.dataset import load_dataset
    from oloproof_core.evaluation import open_pool, plan_run, process_rows

    data = load_dataset(rows(n)).rows
    timings = []
    for _ in range(REPEATS):
        plan = plan_run(system=sleeper, evaluators=LABEL, concurrency=concurrency)
        with open_pool(plan):
            assert plan.pool is not None
            plan.pool.start()
            started = time.perf_counter()
            process_rows(plan, data, InMemoryStore())
            timings.append(time.perf_counter() - started)
    wall, ideal = min(timings), n * 0.02 / concurrency
    return {
        "cases": n,
        "concurrency": concurrency,
        "wall_s": round(wall, 3),
        "ideal_s": round(ideal, 3),
        "ratio_to_ideal": round(wall / ideal, 3),
    }


def p90(values: list[float]) -> float:
    """The nearest-rank 90th percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


SANDBOX_SIDES = {"on": "required", "off": "off"}


def workload_c(path: Path, n: int, concurrency: int | None, pairs: int) -> dict:
    """(a)'s process-isolated run with the sandbox on and off, interleaved in pairs."""
    timings: dict[str, list[float]] = {"on": [], "off": []}
    executions: dict[str, dict] = {}
    for _ in range(pairs):
        for side, mode in SANDBOX_SIDES.items():
            started = time.perf_counter()
            result = evaluate(
                classify,
                str(path),
                LABEL,
                store=InMemoryStore(),
                record=False,
                isolation="process",
                sandbox=mode,
                concurrency=concurrency,
            )
            timings[side].append(time.perf_counter() - started)
            assert result.metric("label").n_observed == n
            execution = result.provenance["execution"]
            assert execution["isolation"] == "process"
            assert execution["start"] == "spawn"
            assert execution["sandbox"]["on"] is (side == "on"), execution["sandbox"]
            executions[side] = execution
    figures: dict[str, Any] = {"cases": n, "pairs": pairs}
    for side, seconds in timings.items():
        figures[side] = {
            "best_s": round(min(seconds), 3),
            "median_s": round(statistics.median(seconds), 3),
            "best_cases_per_s": round(n / min(seconds)),
            "median_cases_per_s": round(n / statistics.median(seconds)),
            "runs_s": [round(value, 3) for value in seconds],
            "processes": executions[side]["processes"],
            "sandbox": executions[side]["sandbox"],
        }
    ratios = [on / off for on, off in zip(timings["on"], timings["off"], strict=True)]
    figures["on_over_off"] = round(statistics.median(ratios), 3)
    figures["pair_ratios"] = [round(ratio, 3) for ratio in ratios]
    return figures


def start_once(mode: str) -> tuple[float, float]:
    """One `MeteredPool` with one process: ms to start it ready, and ms from the pool's
    construction to its close."""
    # Imported here, as in workload_b_warm: the system's process imports this module.
    from oloproof_core.isolation import DEFAULT_MEMORY_LIMIT_MB, MeteredPool

    began = time.perf_counter()
    pool = MeteredPool(classify, processes=1, memory_limit_mb=DEFAULT_MEMORY_LIMIT_MB, sandbox=mode)
    try:
        started = time.perf_counter()
        pool.start(1)
        ready = time.perf_counter()
        execution = pool.describe()
        assert execution["start"] == "spawn"
        assert execution["processes"] == 1
        assert execution["sandbox"]["on"] is (mode == "required"), execution["sandbox"]
    finally:
        pool.close()
    return (ready - started) * 1000, (time.perf_counter() - began) * 1000


def workload_d(starts: int) -> dict:
    """Start-up of one system process, sandbox on vs off, interleaved; and the probe."""
    from oloproof_core.isolation import sandbox_support

    probes = []
    for _ in range(5):
        sandbox_support.cache_clear()
        began = time.perf_counter()
        support = sandbox_support()
        probes.append((time.perf_counter() - began) * 1000)
        assert support.available, support.reason
    for mode in SANDBOX_SIDES.values():  # the first pool pays the gateway's imports
        start_once(mode)
    ready: dict[str, list[float]] = {"on": [], "off": []}
    whole: dict[str, list[float]] = {"on": [], "off": []}
    for _ in range(starts):
        for side, mode in SANDBOX_SIDES.items():
            start_ms, whole_ms = start_once(mode)
            ready[side].append(start_ms)
            whole[side].append(whole_ms)
    figures: dict[str, Any] = {
        "starts": starts,
        "probe_ms": {"median": round(statistics.median(probes), 1), "max": round(max(probes), 1)},
    }
    for side in SANDBOX_SIDES:
        figures[side] = {
            "start_ms_median": round(statistics.median(ready[side]), 1),
            "start_ms_p90": round(p90(ready[side]), 1),
            "start_ms_min": round(min(ready[side]), 1),
            "start_to_close_ms_median": round(statistics.median(whole[side]), 1),
        }
    differences = [on - off for on, off in zip(ready["on"], ready["off"], strict=True)]
    figures["on_minus_off_ms"] = {
        "median": round(figures["on"]["start_ms_median"] - figures["off"]["start_ms_median"], 1),
        "p90": round(figures["on"]["start_ms_p90"] - figures["off"]["start_ms_p90"], 1),
        "median_of_pairs": round(statistics.median(differences), 1),
    }
    figures["exec_true_ms"] = exec_true(support.tool, starts)
    return figures


def exec_true(tool: str | None, times: int) -> dict:
    """`true` run bare and inside the sandbox a pool's processes get (bubblewrap, and
    `setpriv` as root), interleaved: the exec cost the sandbox adds to every process."""
    from oloproof_core.isolation._sandbox import Sandbox

    sandbox = Sandbox(tool=tool)
    commands = {
        "bare": ["true"],
        "sandboxed": sandbox.command(["true"], cwd=os.getcwd(), sys_path=sys.path),
    }
    timings: dict[str, list[float]] = {"bare": [], "sandboxed": []}
    for _ in range(times):
        for side, command in commands.items():
            began = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            timings[side].append((time.perf_counter() - began) * 1000)
    sandbox.close()
    return {side: round(statistics.median(values), 1) for side, values in timings.items()}


def only(value: str) -> list[str]:
    chosen = [part.strip() for part in value.split(",") if part.strip()]
    unknown = sorted(set(chosen) - set(WORKLOADS))
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"workloads are {','.join(WORKLOADS)}; got {value!r}")
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--async-cases", type=int, default=2_000)
    parser.add_argument(
        "--concurrency",
        type=int,
        default=None,
        help="processes for (a) and (c) (default: the engine's, min(16, 2 x CPUs))",
    )
    parser.add_argument(
        "--only",
        type=only,
        default=list(WORKLOADS),
        help="the workloads to run, comma-separated (default: a,b,c,d)",
    )
    parser.add_argument("--pairs", type=int, default=3, help="(c)'s on/off pairs")
    parser.add_argument("--starts", type=int, default=15, help="(d)'s starts of each side")
    args = parser.parse_args()
    figures: dict[str, Any] = {"cpus": os.cpu_count()}
    path = cases_file(args.cases) if {"a", "c"} & set(args.only) else None
    if "a" in args.only:
        assert path is not None
        figures["a_trivial_sync"] = workload_a(path, args.cases, args.concurrency)
    if "b" in args.only:
        figures["b_async_sleep_c64"] = workload_b(args.async_cases, 64)
        figures["b_async_sleep_c64_warm"] = workload_b_warm(args.async_cases, 64)
    if "c" in args.only:
        assert path is not None
        figures["c_sandbox_trivial_sync"] = workload_c(
            path, args.cases, args.concurrency, args.pairs
        )
    if "d" in args.only:
        figures["d_sandbox_start"] = workload_d(args.starts)
    print(json.dumps(figures, indent=2))
    RESULTS.mkdir(exist_ok=True)
    target = RESULTS / "isolation.json"
    merged = json.loads(target.read_text()) if target.exists() else {}
    merged.update(figures)
    target.write_text(json.dumps(merged, indent=2) + "\n")


if __name__ == "__main__":
    main()
