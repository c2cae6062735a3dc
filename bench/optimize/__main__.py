"""The optimization task through `oloproof optimize` and through `gepa.optimize` directly.

Both searches get the same budget of metric calls, the same task and reflection
models (the fake OpenAI-compatible server on 127.0.0.1, answering after a delay
that stands in for a model's latency), the same metric and the same seed text, and
evaluate one case at a time. Measured for each: the metric calls and wall time
until a candidate first scores the target on val, and in all, and the CPU time of
the search (this process, the fake model server's threads in it, and every process
it started: the system's processes, alive or ended). For oloproof also: the whole
optimization (the search and the proof on test), and the share of the (candidate,
case) evaluations the search asked for that were served from the optimization's
records instead of being run again.

    python -m bench.optimize [--delay-ms 20] [--budget 150] [--repeats 3] [--whole-process]

`--whole-process` runs each side in a process of its own and also times `oloproof
optimize` itself, recording into a store of its own, from its launch to its progress
line of the first candidate at the target.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.optimize.command import through_command  # noqa: E402
from tests.support.fake_openai import FakeOpenAI  # noqa: E402
from tests.support.optimize_task import (  # noqa: E402
    METRIC_FILE,
    REFLECT_MODEL,
    SEED_PROMPT,
    TASK_MODEL,
    model_environment,
    responder,
    write_project,
)

TARGET = 1.0
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
LAUNCHED_AT = "BENCH_LAUNCHED_AT"
"""Set by `bench.optimize --whole-process` for the process it starts: the wall clock
(`time.time()`) just before it started it, so that time to the target can be counted
from the process's start, its interpreter and imports included."""


def since_launch() -> float | None:
    launched = os.environ.get(LAUNCHED_AT)
    return None if launched is None else time.time() - float(launched)


def cpu_seconds() -> float:
    """CPU time of this process and of every process it started, alive or ended.

    Ended children count through `RUSAGE_CHILDREN` once reaped (not a sandboxed one's
    processes, killed with their sandbox); a pool kept for the whole optimization is
    still alive when the search ends, so its processes are read from /proc (Linux) then.
    """
    own = resource.getrusage(resource.RUSAGE_SELF)
    ended = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + ended.ru_utime + ended.ru_stime
    return total + sum(_live_cpu(pid) for pid in _descendants(os.getpid()))


def _descendants(root: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
    found, frontier = [], [root]
    while frontier:
        children = [pid for pid, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def _live_cpu(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    # utime and stime, fields 14 and 15 of stat(5), counted after the command's ")".
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


def through_oloproof(folder: Path, budget: int) -> dict[str, Any]:
    from oloproof_core import InMemoryStore
    from oloproof_core.optimize import InMemoryLedger, load_optimize_config, run_optimization

    config = write_project(
        folder, budget={"metric_calls": budget}, engine="gepa", extra={"concurrency": 1}
    )
    spec = load_optimize_config(str(config))
    reached: dict[str, Any] = {}
    started, cpu_started = time.perf_counter(), cpu_seconds()

    def progress(event: str, details: Any) -> None:
        scored = event == "candidate" and (details["candidate"]["val"].get("estimate") or 0)
        if scored and scored >= TARGET and not reached:
            reached.update(
                seconds=time.perf_counter() - started,
                metric_calls=details["budget_used"]["metric_calls"],
                since_launch=since_launch(),
            )
        if event == "proving":
            reached.setdefault("search_seconds", time.perf_counter() - started)
            reached.setdefault("search_cpu_seconds", cpu_seconds() - cpu_started)
        if event == "finished":  # its processes still alive: a sandboxed one's time is
            # lost to RUSAGE_CHILDREN once it is killed, so it is read from /proc now
            reached["whole_seconds"] = time.perf_counter() - started
            reached["whole_cpu_seconds"] = cpu_seconds() - cpu_started

    result = run_optimization(
        spec=spec, store=InMemoryStore(), ledger=InMemoryLedger(), progress=progress
    )
    whole_seconds, whole_cpu = reached.pop("whole_seconds"), reached.pop("whole_cpu_seconds")
    counts = result.evaluations
    asked = counts["run"] + counts["served"]
    return {
        "reached": reached,
        "search_seconds": reached.get("search_seconds"),
        "search_cpu_seconds": reached.get("search_cpu_seconds"),
        "whole_seconds": whole_seconds,
        "whole_cpu_seconds": whole_cpu,
        "metric_calls": result.budget_used["metric_calls"],
        "candidates": len(result.candidates),
        "served_share": counts["served"] / asked if asked else 0.0,
        "evaluations": counts,
    }


def through_gepa(budget: int, base_url: str, folder: Path) -> dict[str, Any]:
    """The glue a user writes around the gepa package, with the same models and metric."""
    import gepa
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="none")
    namespace: dict[str, Any] = {}
    exec(METRIC_FILE, namespace)  # the same metric function
    score = namespace["score"]
    train, val = split_ids(folder)
    calls = {"n": 0}

    class Adapter:
        propose_new_texts = None

        def evaluate(
            self, batch: list[Any], candidate: dict[str, str], capture_traces: bool = False
        ) -> Any:
            outputs, scores, traces = [], [], []
            for row in batch:
                reply = client.chat.completions.create(
                    model=TASK_MODEL,
                    messages=[
                        {"role": "system", "content": candidate["system_prompt"]},
                        {"role": "user", "content": row.input["question"]},
                    ],
                )
                output = {"answer": reply.choices[0].message.content}
                value, info = score(row.input, output, row.expected)
                calls["n"] += 1
                outputs.append(output)
                scores.append(value)
                traces.append(
                    {"Inputs": row.input, "Generated Outputs": output, "Feedback": info["feedback"]}
                )
            return gepa.EvaluationBatch(
                outputs=outputs, scores=scores, trajectories=traces if capture_traces else None
            )

        def make_reflective_dataset(
            self, candidate: Any, eval_batch: Any, components: list[str]
        ) -> dict[str, Any]:
            return dict.fromkeys(components, eval_batch.trajectories)

    def reflect(prompt: str) -> str:
        reply = client.chat.completions.create(
            model=REFLECT_MODEL, messages=[{"role": "user", "content": prompt}]
        )
        return str(reply.choices[0].message.content)

    reached: dict[str, Any] = {}
    started, cpu_started = time.perf_counter(), cpu_seconds()

    class Timer:
        def on_valset_evaluated(self, event: Any) -> None:
            if not reached and event["average_score"] >= TARGET:
                reached.update(
                    seconds=time.perf_counter() - started,
                    metric_calls=calls["n"],
                    since_launch=since_launch(),
                )

    gepa.optimize(
        seed_candidate={"system_prompt": SEED_PROMPT},
        trainset=train,
        valset=val,
        adapter=Adapter(),  # type: ignore[arg-type]
        reflection_lm=reflect,  # type: ignore[arg-type]
        max_metric_calls=budget,
        candidate_selection_strategy="current_best",
        reflection_minibatch_size=3,
        callbacks=[Timer()],  # type: ignore[list-item]
        logger=type("Quiet", (), {"log": lambda self, message: None})(),
        seed=0,
    )
    return {
        "reached": reached,
        "search_seconds": time.perf_counter() - started,
        "search_cpu_seconds": cpu_seconds() - cpu_started,
        "metric_calls": calls["n"],
    }


class Case(NamedTuple):
    id: str
    input: Any
    expected: Any


SPLITS_FILE = "splits.json"
"""Train and val ids as oloproof splits them, written beside the cases for the plain
side's process, which then imports nothing of oloproof's (its import is no plain
user's)."""


def split_ids(folder: Path) -> tuple[list[Case], list[Case]]:
    """The plain side's train and val cases: oloproof's split of the same rows."""
    rows = [json.loads(line) for line in (folder / "cases.jsonl").read_text().splitlines()]
    cases = {r["id"]: Case(r["id"], r["input"], r["expected"]) for r in rows}
    written = folder / SPLITS_FILE
    if not written.exists():
        write_split_ids(folder)
    ids = json.loads(written.read_text())
    return [cases[i] for i in ids["train"]], [cases[i] for i in ids["val"]]


def write_split_ids(folder: Path) -> None:
    from oloproof_core import Row
    from oloproof_core.optimize import split_rows

    rows = [json.loads(line) for line in (folder / "cases.jsonl").read_text().splitlines()]
    splits = split_rows([Row(id=r["id"], input=r["input"], expected=r["expected"]) for r in rows])
    ids = {"train": [r.id for r in splits.train], "val": [r.id for r in splits.val]}
    (folder / SPLITS_FILE).write_text(json.dumps(ids), encoding="utf-8")


def in_a_process(side: str, folder: Path, budget: int, base_url: str) -> dict[str, Any]:
    """One side run by `bench.optimize.one` in a fresh process, launched now."""
    import subprocess

    if side == "gepa":
        write_split_ids(folder)
    env = {**os.environ, LAUNCHED_AT: repr(time.time())}
    done = subprocess.run(
        [sys.executable, "-m", "bench.optimize.one", side, str(folder), str(budget), base_url],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def _ratio_from_launch(ours: dict[str, Any], theirs: dict[str, Any]) -> float | None:
    a, b = ours["reached"].get("since_launch"), theirs["reached"].get("since_launch")
    return None if a is None or b is None else a / b


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.optimize")
    parser.add_argument("--delay-ms", type=float, default=20.0)
    parser.add_argument("--budget", type=int, default=150)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--whole-process",
        action="store_true",
        help="run each side in a process of its own, timed from its start (imports included)",
    )
    args = parser.parse_args()
    server = FakeOpenAI().start()
    server.respond_with(lambda request: replace(responder(request), delay_s=args.delay_ms / 1000))
    os.environ.update(model_environment(server.base_url))
    os.environ["OLOPROOF_RECORD"] = "0"
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for repeat in range(args.repeats):
            folder = Path(tmp) / f"project{repeat}"
            if args.whole_process:
                ours = in_a_process("oloproof", folder, args.budget, server.base_url)
                theirs = in_a_process("gepa", folder, args.budget, server.base_url)
                command_folder = Path(tmp) / f"command{repeat}"
                ours["command"] = through_command(command_folder, args.budget, TARGET)
            else:
                ours = through_oloproof(folder, args.budget)
                theirs = through_gepa(args.budget, server.base_url, folder)
            runs.append(
                {
                    "oloproof": ours,
                    "gepa": theirs,
                    "ratio_to_target": ours["reached"]["seconds"] / theirs["reached"]["seconds"],
                    "ratio_to_target_from_launch": _ratio_from_launch(ours, theirs),
                    "ratio_search": ours["search_seconds"] / theirs["search_seconds"],
                    "ratio_search_cpu": ours["search_cpu_seconds"] / theirs["search_cpu_seconds"],
                }
            )
    server.stop()
    report = {
        "delay_ms": args.delay_ms,
        "budget": args.budget,
        "runs": runs,
        "median_ratio_to_target": statistics.median(r["ratio_to_target"] for r in runs),
        "median_ratio_search": statistics.median(r["ratio_search"] for r in runs),
        "median_ratio_search_cpu": statistics.median(r["ratio_search_cpu"] for r in runs),
    }
    if args.whole_process:
        report["median_ratio_to_target_from_launch"] = statistics.median(
            r["ratio_to_target_from_launch"] for r in runs
        )
        report["median_ratio_command_to_target_from_launch"] = statistics.median(
            r["oloproof"]["command"]["since_launch"] / r["gepa"]["reached"]["since_launch"]
            for r in runs
        )
    name = "optimize_whole_process.json" if args.whole_process else "optimize.json"
    (ROOT / "bench" / "results" / name).write_text(
        json.dumps(report, indent=2) + "\n", encoding="utf-8"
    )
    _print(runs, report)


def _print(runs: list[dict[str, Any]], report: dict[str, Any]) -> None:
    for item in runs:
        ours, theirs = item["oloproof"], item["gepa"]
        print(
            f"oloproof: target at {ours['reached']['metric_calls']} calls, "
            f"{ours['reached']['seconds']:.2f} s; search {ours['search_seconds']:.2f} s "
            f"({ours['search_cpu_seconds']:.2f} s CPU), whole {ours['whole_seconds']:.2f} s "
            f"({ours['whole_cpu_seconds']:.2f} s CPU), {ours['metric_calls']} calls, served "
            f"from records {ours['served_share']:.0%} | "
            f"gepa: target at {theirs['reached']['metric_calls']} calls, "
            f"{theirs['reached']['seconds']:.2f} s; search {theirs['search_seconds']:.2f} s "
            f"({theirs['search_cpu_seconds']:.2f} s CPU), {theirs['metric_calls']} calls | "
            f"ratio {item['ratio_to_target']:.2f}× / {item['ratio_search']:.2f}× "
            f"(CPU {item['ratio_search_cpu']:.2f}×)"
        )
    if "median_ratio_to_target_from_launch" in report:
        launched = [
            (r["oloproof"]["reached"]["since_launch"], r["gepa"]["reached"]["since_launch"])
            for r in runs
        ]
        print(
            "time to the target from each process's start (oloproof / plain gepa): "
            + ", ".join(f"{a:.2f} / {b:.2f} s" for a, b in launched)
            + f"; median ratio {report['median_ratio_to_target_from_launch']:.2f}×"
        )
        command = [r["oloproof"]["command"]["since_launch"] for r in runs]
        print(
            "`oloproof optimize` (recorded), the same from its launch: "
            + ", ".join(f"{a:.2f} s" for a in command)
            + f"; median ratio {report['median_ratio_command_to_target_from_launch']:.2f}×"
        )
    print(
        f"median overhead ratio: to target {report['median_ratio_to_target']:.2f}×, "
        f"whole search {report['median_ratio_search']:.2f}×, its CPU "
        f"{report['median_ratio_search_cpu']:.2f}× (target ≤ 1.2×)"
    )


if __name__ == "__main__":
    main()
