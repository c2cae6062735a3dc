"""Engine throughput: (a) 100,000 trivial cases vs a plain loop, (b) an async system's overhead.

Each figure is the best of three repetitions. The plain loop of (a) does the same work
without oloproof: read the JSONL file, call the system, compare the label, count.

Run: .venv/bin/python -m bench.engine [--cases 100000] [--async-cases 2000]
Writes bench/results/engine.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from oloproof import evaluate, system
from oloproof.evaluators import ExactMatch
from oloproof_core.results.store import InMemoryStore

RESULTS = Path(__file__).resolve().parents[1] / "results"


def rows(n: int) -> list[dict]:
    return [
        {
            "id": f"case-{i}",
            "input": {"question": f"refund please #{i}" if i % 2 else f"where is it #{i}"},
            "expected": {"label": "refund" if i % 2 else "other"},
        }
        for i in range(n)
    ]


@system(name="bench-bot", version="1")
def classify(case):
    return {"label": "refund" if "refund" in case["question"] else "other"}


def plain_loop(path: Path) -> float:
    """The same work without oloproof: read the JSONL file, call, compare, count."""
    correct = total = 0
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            output = classify.fn(row["input"])
            correct += output["label"] == row["expected"]["label"]
            total += 1
    return correct / total


REPEATS = 3


def best_of(work) -> float:
    timings = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        work()
        timings.append(time.perf_counter() - started)
    return min(timings)


def workload_a(n: int) -> dict:
    path = Path(tempfile.mkdtemp()) / "cases.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for row in rows(n):
            handle.write(json.dumps(row) + "\n")
    # Best of REPEATS for both, so a noisy neighbour on the machine skews neither side.
    plain_s = best_of(lambda: plain_loop(path))
    result = None

    def engine_run() -> None:
        nonlocal result
        result = evaluate(
            classify,
            str(path),
            [ExactMatch(criterion="label", field="label")],
            isolation="thread",
            store=InMemoryStore(),
            record=False,
        )

    engine_s = best_of(engine_run)
    assert result is not None
    assert result.metric("label").n_observed == n
    return {
        "cases": n,
        "engine_s": round(engine_s, 3),
        "cases_per_s": round(n / engine_s),
        "plain_loop_s": round(plain_s, 4),
        "ratio_to_plain_loop": round(engine_s / plain_s, 1),
    }


def workload_b(n: int, sleep_s: float, concurrency: int) -> dict:
    @system(name="bench-sleeper", version="1")
    async def sleeper(case):
        await asyncio.sleep(sleep_s)
        return {"label": "other"}

    data = rows(n)
    wall = best_of(
        lambda: evaluate(
            sleeper,
            data,
            [ExactMatch(criterion="label", field="label")],
            store=InMemoryStore(),
            record=False,
            concurrency=concurrency,
        )
    )
    ideal = n * sleep_s / concurrency
    return {
        "cases": n,
        "sleep_ms": sleep_s * 1000,
        "concurrency": concurrency,
        "wall_s": round(wall, 3),
        "ideal_s": round(ideal, 3),
        "ratio_to_ideal": round(wall / ideal, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--async-cases", type=int, default=2_000)
    args = parser.parse_args()
    a = workload_a(args.cases)
    b = workload_b(args.async_cases, 0.02, 64)
    b16 = workload_b(500, 0.02, 16)
    figures = {"a_trivial_exact_match": a, "b_async_sleep_c64": b, "b_async_sleep_c16": b16}
    print(json.dumps(figures, indent=2))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "engine.json").write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
