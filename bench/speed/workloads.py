"""The systems, evaluators and plain loops of `bench.speed`.

Each plain loop does what the matching `oloproof run` does for the user, by hand: read
the JSONL file, call the system, compare the label, and write one row per case into
SQLite with `executemany` in one transaction. Run one as
`python -m bench.speed.workloads plain|plain-async DATASET DATABASE`.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
import time
from pathlib import Path

from oloproof import system
from oloproof.evaluators import evaluator

LABELS = ("refund", "other")


def write_dataset(path: Path, n: int) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            question = f"refund please #{i}" if i % 2 else f"where is it #{i}"
            row = {"id": f"case-{i}", "input": {"question": question}}
            row["expected"] = {"label": LABELS[(i + 1) % 2]}
            handle.write(json.dumps(row) + "\n")
    return path


def classify_text(question: str) -> dict[str, str]:
    return {"label": "refund" if "refund" in question else "other"}


@system(name="speed-bot", version="1")
def classify(case):
    return classify_text(case["question"])


@system(name="speed-sleeper", version="1")
async def sleeper(case):
    await asyncio.sleep(0.02)
    return classify_text(case["question"])


@evaluator(criterion="slow_check", reads=("input", "output"))
async def slow_check(case):
    """Stands for a model judge: waits 5 ms on I/O, then answers."""
    await asyncio.sleep(0.005)
    return case.output["label"] in LABELS


def _rows(path: Path):
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            yield json.loads(line)


def _store(database: Path, rows: list[tuple]) -> None:
    connection = sqlite3.connect(database)
    with connection:
        connection.execute(
            "CREATE TABLE IF NOT EXISTS result (case_id TEXT, output TEXT, passed INTEGER, "
            "latency_ms REAL)"
        )
        connection.executemany("INSERT INTO result VALUES (?, ?, ?, ?)", rows)
    connection.close()


def plain(dataset: Path, database: Path) -> float:
    """The sync workload by hand: the pass rate, with every case's row written."""
    rows = []
    for row in _rows(dataset):
        started = time.perf_counter()
        output = classify_text(row["input"]["question"])
        latency = (time.perf_counter() - started) * 1000
        passed = output["label"] == row["expected"]["label"]
        rows.append((row["id"], json.dumps(output), passed, latency))
    _store(database, rows)
    return sum(passed for _, _, passed, _ in rows) / len(rows)


async def _plain_async(dataset: Path, concurrency: int) -> list[tuple]:
    limit = asyncio.Semaphore(concurrency)

    async def one(row: dict) -> tuple:
        async with limit:
            started = time.perf_counter()
            await asyncio.sleep(0.02)
            output = classify_text(row["input"]["question"])
            latency = (time.perf_counter() - started) * 1000
        return (row["id"], json.dumps(output), output == row["expected"], latency)

    return list(await asyncio.gather(*(one(row) for row in _rows(dataset))))


def plain_async(dataset: Path, database: Path, concurrency: int = 16) -> None:
    """The 20 ms async workload by hand, at the same concurrency."""
    _store(database, asyncio.run(_plain_async(dataset, concurrency)))


if __name__ == "__main__":
    kind, dataset_path, database_path = sys.argv[1:4]
    runner = plain if kind == "plain" else plain_async
    runner(Path(dataset_path), Path(database_path))
