"""Isolation throughput: (a) 100,000 trivial sync cases in processes vs threads, (b) async.

(a) runs the same evaluate() as bench.engine (a JSONL file, a trivial classifier,
ExactMatch, in-memory store, recording off) once with `isolation="process"` (the
default) and once with `isolation="thread"`, in the same process. (b) runs 2,000
cases of an async system sleeping 20 ms at concurrency 64 in its own process. Each
figure is the best of three repetitions; the systems live at the top of this module,
so the child processes import them by reference.

Run: .venv/bin/python -m bench.isolation [--cases 100000] [--async-cases 2000]
Writes bench/results/isolation.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from oloproof import evaluate, system
from oloproof.evaluators import ExactMatch
from oloproof_core import InMemoryStore

RESULTS = Path(__file__).resolve().parents[1] / "results"
REPEATS = 3
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


def workload_a(n: int, concurrency: int | None) -> dict:
    path = Path(tempfile.mkdtemp()) / "cases.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for row in rows(n):
            handle.write(json.dumps(row) + "\n")
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--async-cases", type=int, default=2_000)
    parser.add_argument(
        "--concurrency",
        type=int,
        default=None,
        help="processes for (a) (default: the engine's, min(16, 2 x CPUs))",
    )
    args = parser.parse_args()
    figures = {
        "cpus": os.cpu_count(),
        "a_trivial_sync": workload_a(args.cases, args.concurrency),
        "b_async_sleep_c64": workload_b(args.async_cases, 64),
        "b_async_sleep_c64_warm": workload_b_warm(args.async_cases, 64),
    }
    print(json.dumps(figures, indent=2))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "isolation.json").write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
