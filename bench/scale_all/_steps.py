"""What each step of `bench.scale_all` runs: the existing benchmarks' own commands.

A step is one or more commands, each `python -m bench.<module> ...` in a child process
that writes its figures to a JSON file of its own (`--out`), read back once it exits.
The sizes are the issue's (`FULL`) or small enough to try the whole pipeline in a few
minutes (`QUICK`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Sizes:
    conclusion_cases: tuple[int, ...]
    planning_sizes: tuple[int, int]
    record_cases: int
    submission_cases: tuple[int, ...]
    io_cases: int
    io_workers: tuple[int, ...]
    io_chunk: int
    trivial_cases: int
    trivial_workers: tuple[int, ...]
    trivial_chunk: int
    fault_cases: int
    fault_chunk: int
    fault_at: tuple[float, ...]
    page_cases: int
    page_runs: int
    page_repeats: int


FULL = Sizes(
    conclusion_cases=(100_000, 1_000_000),
    planning_sizes=(1_000, 50_000),
    record_cases=100_000,
    submission_cases=(100_000, 1_000_000),
    io_cases=100_000,
    io_workers=(1, 2, 4, 8),
    io_chunk=1_000,
    trivial_cases=1_000_000,
    trivial_workers=(1, 2, 4),
    trivial_chunk=5_000,
    fault_cases=1_000_000,
    fault_chunk=5_000,
    fault_at=(0.3, 0.7),
    page_cases=1_000_000,
    page_runs=10_000,
    page_repeats=100,
)

QUICK = Sizes(
    conclusion_cases=(2_000, 20_000),
    planning_sizes=(200, 2_000),
    record_cases=2_000,
    submission_cases=(2_000, 20_000),
    io_cases=2_000,
    io_workers=(1, 2),
    io_chunk=500,
    trivial_cases=2_000,
    trivial_workers=(1, 2),
    trivial_chunk=500,
    fault_cases=20_000,
    # 20 chunks, so the fault comes while chunks are still being run.
    fault_chunk=1_000,
    fault_at=(0.3,),
    page_cases=2_000,
    page_runs=200,
    page_repeats=10,
)


@dataclass(frozen=True)
class Command:
    """One child process: `python -m <module> <arguments> --out <file>`."""

    label: str
    module: str
    arguments: list[str]
    params: dict[str, Any] = field(default_factory=dict)

    def argv(self, out: str) -> list[str]:
        return [sys.executable, "-m", self.module, *self.arguments, "--out", out]


@dataclass(frozen=True)
class Step:
    name: str
    title: str
    commands: list[Command]


def _numbers(values: tuple[int, ...] | tuple[float, ...]) -> list[str]:
    return [str(value) for value in values]


def steps(sizes: Sizes, *, postgres: str, redis: str) -> list[Step]:
    """Every step, in the order they run."""
    return _database_steps(sizes, postgres, redis) + _worker_steps(sizes, postgres, redis)


def _database_steps(sizes: Sizes, postgres: str, redis: str) -> list[Step]:
    """The steps without workers: the platform's own functions on a scratch database
    (planning's chunk messages go to the broker's database, emptied after)."""
    return [
        Step("conclusion", "The conclusion's memory", [Command(
            "bench.scale", "bench.scale",
            ["--cases", *_numbers(sizes.conclusion_cases), "--old-up-to", "0",
             "--postgres", postgres],
        )]),
        Step("planning", "Planning's statements", [Command(
            "bench.scale_workers --planning", "bench.scale_workers",
            ["--planning", "--planning-sizes", *_numbers(sizes.planning_sizes),
             "--postgres", postgres, "--redis", redis],
        )]),
        Step("record", "Recording against a raw COPY", [Command(
            "bench.record (PostgreSQL)", "bench.record",
            ["--cases", str(sizes.record_cases), "--no-sqlite",
             "--postgres", f"{postgres.rstrip('/')}/oloproof_scale_all_record"],
        )]),
        Step("submission", "Submission's memory", [Command(
            "bench.submit_memory's measure", "bench.scale_all._submission",
            ["--cases", *_numbers(sizes.submission_cases), "--postgres", postgres],
        )]),
    ]  # fmt: skip


def _worker_steps(sizes: Sizes, postgres: str, redis: str) -> list[Step]:
    """The steps on real Celery workers and Redis, and the pages on the real server."""
    workers = ["--postgres", postgres, "--redis", redis]
    return [
        Step("io", "I/O-bound across workers", [Command(
            "bench.scale_workers --io", "bench.scale_workers",
            ["--io", "--io-cases", str(sizes.io_cases), "--io-chunk", str(sizes.io_chunk),
             "--io-workers", *_numbers(sizes.io_workers), *workers],
        )]),
        Step("trivial", "Trivial across workers", [Command(
            "bench.scale_workers --trivial", "bench.scale_workers",
            ["--trivial", "--trivial-cases", str(sizes.trivial_cases),
             "--trivial-chunk", str(sizes.trivial_chunk),
             "--trivial-workers", *_numbers(sizes.trivial_workers), *workers],
        )]),
        Step("faults", "Faults at scale", [
            Command(
                f"bench.scale_workers --faults --fault-at {at}", "bench.scale_workers",
                ["--faults", "--fault-cases", str(sizes.fault_cases), "--fault-at", str(at),
                 "--trivial-chunk", str(sizes.fault_chunk), *workers],
                params={"fault_at": at},
            )
            for at in sizes.fault_at
        ]),
        Step("pages", "Pages at scale", [Command(
            "bench.scale_pages", "bench.scale_pages",
            ["--cases", str(sizes.page_cases), "--runs", str(sizes.page_runs),
             "--repeats", str(sizes.page_repeats), "--postgres", postgres, "--drop"],
            params={"runs": sizes.page_runs},
        )]),
    ]  # fmt: skip


STEP_NAMES = (
    "conclusion", "planning", "record", "submission", "io", "trivial", "faults", "pages",
)  # fmt: skip
