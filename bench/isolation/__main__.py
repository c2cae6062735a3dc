"""Isolation: (a) 100,000 trivial sync cases in processes vs threads, (b) async,
(c) the same 100,000 cases with the sandbox on vs off, by reference and by value,
(d) a sandboxed process's start, (e) that start for a system of a script, of a
notebook cell and of an importable module.

(a) runs the same evaluate() as bench.engine (a JSONL file, a trivial classifier,
ExactMatch, in-memory store, recording off) once with `isolation="process"` (the
default) and once with `isolation="thread"`, in the same process. (b) runs 2,000
cases of an async system sleeping 20 ms at concurrency 64 in its own process. Each
figure of (a) and (b) is the best of three repetitions; the systems live in
`bench.isolation._systems`, so the child processes import them by reference.

(c) runs (a)'s process-isolated evaluate() with `sandbox="required"` and with
`sandbox="off"`, for the trivial system twice: as (a) has it (its processes import it
by reference) and as a closure that `_systems.closure_classifier()` makes (no import
reference, so it travels to its processes by value, pickled with cloudpickle). The
four runs of a round are interleaved, each round starting one later than the last; it
reports each side's best and median and the medians of the rounds' ratios. (d) times
`MeteredPool.start(1)` (one system process spawned, its system loaded and warmed,
ready for a case) with the sandbox on and off, interleaved, and the first-use probe
`sandbox_support()`. (e) times the same start, sandbox required, in fresh `python`
processes that each define the system their own way: at the top of a script (its
`__main__`, so by value), in a notebook cell (executed into `__main__`'s namespace,
as IPython does; and, when ipykernel and nbclient are installed, in a real kernel
through nbclient) and in an importable module (by reference, the floor); one process
of each kind per round, interleaved, each timing its first pool and `--again` more.

Run: .venv/bin/python -m bench.isolation [--only a,b,c,d,e] [--cases 100000]
     [--async-cases 2000] [--pairs 3] [--starts 15] [--scripts 12] [--again 2]
Merges its figures into bench/results/isolation.json (the keys of workloads not run
are kept).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.isolation._starts import kernel_available, p90, workload_e
from bench.isolation._systems import classify, closure_classifier, sleeper
from oloproof import evaluate
from oloproof.evaluators import ExactMatch
from oloproof_core import InMemoryStore

RESULTS = Path(__file__).resolve().parents[1] / "results"
REPEATS = 3
WORKLOADS = ("a", "b", "c", "d", "e")
LABEL = [ExactMatch(criterion="label", field="label")]


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
    from oloproof_core.datasets.dataset import load_dataset
    from oloproof_core.evaluation.plan import plan_run
    from oloproof_core.evaluation.run import open_pool, process_rows

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


SANDBOX_SIDES = {"on": "required", "off": "off"}
TRAVELS = ("reference", "value")


def workload_c(path: Path, n: int, concurrency: int | None, pairs: int) -> dict:
    """(a)'s process-isolated run with the sandbox on and off, its system travelling by
    reference and by value: `pairs` rounds of the four runs, interleaved."""
    systems = {"reference": classify, "value": closure_classifier()}
    sides = [(travel, side) for travel in TRAVELS for side in SANDBOX_SIDES]
    timings: dict[tuple[str, str], list[float]] = {key: [] for key in sides}
    executions: dict[tuple[str, str], dict] = {}
    for round_ in range(pairs):
        shift = round_ % len(sides)  # each round starts with the next side
        for travel, side in sides[shift:] + sides[:shift]:
            started = time.perf_counter()
            result = evaluate(
                systems[travel],
                str(path),
                LABEL,
                store=InMemoryStore(),
                record=False,
                isolation="process",
                sandbox=SANDBOX_SIDES[side],
                concurrency=concurrency,
            )
            timings[travel, side].append(time.perf_counter() - started)
            assert result.metric("label").n_observed == n
            execution = result.provenance["execution"]
            assert execution["isolation"] == "process"
            assert execution["start"] == travel, execution["start"]
            assert execution["sandbox"]["on"] is (side == "on"), execution["sandbox"]
            executions[travel, side] = execution
    figures: dict[str, Any] = {"cases": n, "rounds": pairs}
    for travel in TRAVELS:
        figures[travel] = {"system": executions[travel, "on"]["reference"] or "by value"}
        for side in SANDBOX_SIDES:
            seconds = timings[travel, side]
            figures[travel][side] = {
                "best_s": round(min(seconds), 3),
                "median_s": round(statistics.median(seconds), 3),
                "best_cases_per_s": round(n / min(seconds)),
                "median_cases_per_s": round(n / statistics.median(seconds)),
                "runs_s": [round(value, 3) for value in seconds],
                "start": executions[travel, side]["start"],
                "processes": executions[travel, side]["processes"],
                "sandbox": executions[travel, side]["sandbox"],
            }
        figures[travel].update(ratios(timings[travel, "on"], timings[travel, "off"], "on_over_off"))
    # The by-value system in its sandbox against (a)'s system without one: the start by
    # value and the sandbox together.
    figures.update(
        ratios(timings["value", "on"], timings["reference", "off"], "value_on_over_reference_off")
    )
    figures.update(
        ratios(timings["value", "on"], timings["reference", "on"], "value_on_over_reference_on")
    )
    return figures


def ratios(numerators: list[float], denominators: list[float], name: str) -> dict:
    """The median of the rounds' ratios, and each round's."""
    each = [a / b for a, b in zip(numerators, denominators, strict=True)]
    return {name: round(statistics.median(each), 3), f"{name}_rounds": [round(r, 3) for r in each]}


def start_once(mode: str) -> tuple[float, float]:
    """One `MeteredPool` with one process: ms to start it ready, and ms from the pool's
    construction to its close."""
    from oloproof_core.execution.isolation import DEFAULT_MEMORY_LIMIT_MB, MeteredPool

    began = time.perf_counter()
    pool = MeteredPool(classify, processes=1, memory_limit_mb=DEFAULT_MEMORY_LIMIT_MB, sandbox=mode)
    try:
        started = time.perf_counter()
        pool.start(1)
        ready = time.perf_counter()
        execution = pool.describe()
        assert execution["start"] == "reference"
        assert execution["processes"] == 1
        assert execution["sandbox"]["on"] is (mode == "required"), execution["sandbox"]
    finally:
        pool.close()
    return (ready - started) * 1000, (time.perf_counter() - began) * 1000


def workload_d(starts: int) -> dict:
    """Start-up of one system process, sandbox on vs off, interleaved; and the probe."""
    from oloproof_core.execution.isolation import sandbox_support

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
    from oloproof_core.execution.isolation._sandbox import Sandbox

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


# (e): the same timing in each kind of fresh process; it prints one line, START {json}.
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
        help="the workloads to run, comma-separated (default: a,b,c,d,e)",
    )
    parser.add_argument(
        "--pairs",
        type=int,
        default=3,
        help="(c)'s rounds (on and off, each by reference and by value)",
    )
    parser.add_argument("--starts", type=int, default=15, help="(d)'s starts of each side")
    parser.add_argument("--scripts", type=int, default=12, help="(e)'s processes of each kind")
    parser.add_argument(
        "--again", type=int, default=2, help="(e)'s pools after the first in each process"
    )
    parser.add_argument(
        "--no-kernel", action="store_true", help="(e) without the notebook in a real kernel"
    )
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
    if "e" in args.only:
        kernel = not args.no_kernel and kernel_available()
        figures["e_start_by_kind"] = workload_e(args.scripts, args.again, kernel)
    print(json.dumps(figures, indent=2))
    RESULTS.mkdir(exist_ok=True)
    target = RESULTS / "isolation.json"
    merged = json.loads(target.read_text()) if target.exists() else {}
    merged.update(figures)
    target.write_text(json.dumps(merged, indent=2) + "\n")


if __name__ == "__main__":
    main()
