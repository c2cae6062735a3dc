"""Judging's cost: 10,000 verdicts of a trivial `@evaluator`, in this process and contained.

Each case has an output of its own, so every verdict is judged (nothing shared, nothing
cached): the figure is judging's whole cost per verdict, cache keys and the in-memory
store's writes included. Workloads, each the best and median of `--repeats` runs:

- `in_process`: `judge_cases` with no `ContainedJudging`, as `isolation="thread"` judges
  (and as every run judged before evaluators had processes of their own);
- `contained_cold`: a fresh `ContainedJudging` per run, its process started (in the
  sandbox, when the machine makes one) and closed inside the clock;
- `contained_warm`: one `ContainedJudging` kept across runs, its processes started by
  an untimed first run: what a run's later batches pay;
- `contained_one_per_message`: as warm, with a batch of one verdict per message (the
  round trip per verdict that batching avoids).

Run: .venv/bin/python -m bench.judging [--cases 10000] [--repeats 5] [--sandbox auto]
Writes bench/results/judging.json. Importable against an older tree for the `in_process`
figure alone (`--only in_process`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.judging._evaluators import label_ok
from oloproof_core.cases.case import CaseResult
from oloproof_core.judging.judge import judge_cases
from oloproof_core.results.store import InMemoryStore

RESULTS = Path(__file__).resolve().parents[1] / "results"
WORKLOADS = ("in_process", "contained_cold", "contained_warm", "contained_one_per_message")


def judged_cases(n: int, run: int) -> list[CaseResult]:
    """`n` cases with outputs of their own (and of this run's own), ready to judge."""
    cases = []
    for i in range(n):
        case = CaseResult(id=f"c{i}", input={"q": i}, expected={"label": "x" if i % 2 else "y"})
        case.output = {"label": "x", "n": i, "run": run}
        case.output_json = json.dumps(case.output, sort_keys=True, separators=(",", ":"))
        cases.append(case)
    return cases


def timed(n: int, repeats: int, judge: Callable[[list[CaseResult]], object]) -> dict[str, Any]:
    seconds = []
    for run in range(repeats):
        cases = judged_cases(n, run)
        started = time.perf_counter()
        judge(cases)
        seconds.append(time.perf_counter() - started)
        assert all(case.verdicts["label_ok"].value is not None for case in cases)
        assert [case.verdicts["label_ok"].value for case in cases[:2]] == [0.0, 1.0]
    best, median = min(seconds), statistics.median(seconds)
    return {
        "best_s": round(best, 4),
        "median_s": round(median, 4),
        "us_per_verdict_best": round(best / n * 1e6, 1),
        "runs_s": [round(value, 4) for value in seconds],
    }


def contained(sandbox: str) -> Any:
    from oloproof_core.judging.contained import ContainedJudging

    return ContainedJudging(
        time_limit=30.0,
        limit_origin="bench",
        memory_limit_mb=4096,
        sandbox=sandbox,
        hidden=(),
        concurrency=16,
    )


def workloads(n: int, repeats: int, sandbox: str, only: set[str]) -> dict[str, Any]:
    figures: dict[str, Any] = {}

    def judge_with(judging: Any) -> Callable[[list[CaseResult]], None]:
        def judge(cases: list[CaseResult]) -> None:
            judge_cases(cases, [label_ok], InMemoryStore(), concurrency=16, contained=judging)

        return judge

    if "in_process" in only:
        figures["in_process"] = timed(
            n,
            repeats,
            lambda cases: judge_cases(cases, [label_ok], InMemoryStore(), concurrency=16),
        )
    if "contained_cold" in only:

        def cold(cases: list[CaseResult]) -> None:
            judging = contained(sandbox)
            try:
                judge_with(judging)(cases)
            finally:
                figures["described"] = judging.describe()
                judging.close()

        figures["contained_cold"] = timed(n, repeats, cold)
    for name, per_message in (("contained_warm", None), ("contained_one_per_message", 1)):
        if name in only:
            figures[name] = warm(n, repeats, sandbox, per_message, judge_with)
    return figures


def warm(
    n: int, repeats: int, sandbox: str, per_message: int | None, judge_with: Any
) -> dict[str, Any]:
    from oloproof_core.judging.contained import _pool

    kept = _pool.MAX_BATCH
    _pool.MAX_BATCH = per_message or kept
    judging = contained(sandbox)
    try:
        judge_with(judging)(judged_cases(n, -1))  # starts (and grows) the processes
        return timed(n, repeats, judge_with(judging))
    finally:
        judging.close()
        _pool.MAX_BATCH = kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sandbox", default="auto", choices=("auto", "required", "off"))
    parser.add_argument("--only", default=",".join(WORKLOADS))
    parser.add_argument("--output", default=str(RESULTS / "judging.json"))
    args = parser.parse_args()
    only = set(args.only.split(","))
    figures = workloads(args.cases, args.repeats, args.sandbox, only)
    figures.update(cases=args.cases, repeats=args.repeats, sandbox=args.sandbox)
    if "in_process" in figures:
        for name in WORKLOADS[1:]:
            if name in figures:
                ratio = figures[name]["best_s"] / figures["in_process"]["best_s"]
                figures[name]["best_over_in_process"] = round(ratio, 2)
    text = json.dumps(figures, indent=2)
    Path(args.output).write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
