"""Agents' transcripts: what keeping them costs a recording, their size, and the case page.

    .venv/bin/python -m bench.agents [--cases 2000] [--repeats 5] [--out agents.json]

In a child process on a fresh SQLite data folder (Django settings are per process):

- **recording**: the same run of `--cases` agent cases (one pass/fail criterion, built as
  `bench.record` builds its run) recorded through `DjangoStore.record_run`, once with a
  transcript per case (14 steps, about 5.6 KB of JSON: the policy step, two messages,
  four model calls with their tool calls and tool results, the answer) and once without;
  the two alternate, `--repeats` times each after one warm-up of each, and the medians
  are compared. What is timed is the store's whole write of the run (cases, verdicts,
  estimates, transcripts), the part of an `oloproof run` that keeping transcripts adds to.
- **the transcript's own work** per case: its JSON, its digest, its compression.
- **storage**: the compressed bytes per case against its JSON's.
- **the case page** with a 200-step transcript: server time of `GET /runs/N/cases/ID`
  through Django's test client (no network), p50 and p95 of `--page-repeats`.
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
import zlib
from pathlib import Path
from typing import Any

from bench.record.__main__ import build_result


def agent_trace(index: int, rounds: int = 4, reply_words: int = 50) -> Any:
    """A transcript shaped as the gateway records one: what an orders agent said and did."""
    from oloproof_core.cases.transcript import Transcript

    order = f"A-{index:05d}"
    steps: list[dict[str, Any]] = [
        {"kind": "system_step", "by": "system", "name": "read the refund policy",
         "data": {"refunds": "lost orders only"}, "at": 1.7e9 + index},
        {"kind": "message", "by": "gateway", "call": 1, "role": "system",
         "text": "You help with orders. Use the tools."},
        {"kind": "message", "by": "gateway", "call": 1, "role": "user",
         "text": f"Order {order} never came, please refund it. " * 3},
    ]  # fmt: skip
    tools = ["find_order", "refund", "notify", "close_ticket"]
    for number, tool in enumerate(tools[:rounds], start=1):
        call_id = f"call_{index}_{number}"
        steps.append(_model_call(number, tool, call_id, order))
        result = f"{tool} done for {order}: " + " ".join(f"detail{n}" for n in range(reply_words))
        steps.append(
            {"kind": "tool_result", "by": "gateway", "call": number + 1, "role": "tool",
             "tool_call_id": call_id, "name": tool, "text": result}
        )  # fmt: skip
    answer = _model_call(rounds + 1, None, "", order)
    answer["text"] = f"Order {order} was lost in transit; a refund is on its way."
    steps.append(answer)
    return Transcript(steps=steps)


def _model_call(number: int, tool: str | None, call_id: str, order: str) -> dict[str, Any]:
    arguments = json.dumps({"order": order})
    calls = [] if tool is None else [{"id": call_id, "name": tool, "arguments": arguments}]
    return {
        "kind": "model_call", "by": "gateway", "call": number, "model": "gpt-4o-mini",
        "endpoint": "chat.completions", "streamed": False, "status": "ok",
        "latency_ms": 412.5 + number, "input_tokens": 310 + 40 * number, "output_tokens": 18,
        "cost_usd": 5.7e-05, "role": "assistant", "text": "", "tool_calls": calls,
        "tools_offered": ["find_order", "refund", "notify", "close_ticket"],
    }  # fmt: skip


def with_traces(result: Any) -> Any:
    for index, case in enumerate(result.cases):
        case.trace = agent_trace(index)
    return result


def _fresh(result: Any, label: str) -> Any:
    """The result again as another release's run (a run is recorded once)."""
    result.run_id = None
    result.provenance = {**result.provenance, "system": {"name": "bench-agent", "version": label}}
    return result


def _packed_in_the_store(result: Any) -> None:
    """Untimed: the transcripts as the store got them before packing moved to filing."""
    for case in result.cases:
        case.trace._packed = None


def _packed_when_filed(result: Any) -> None:
    """Untimed: the transcripts as a run's filing hands them to the store."""
    for case in result.cases:
        case.trace.packed()


VARIANTS = (
    ("without", None),
    ("packed_when_filed", _packed_when_filed),
    ("packed_in_the_store", _packed_in_the_store),
)


def time_recordings(n_cases: int, repeats: int) -> dict[str, Any]:
    from runs.store import DjangoStore

    store = DjangoStore()
    results = {
        "without": build_result(n_cases),
        "packed_when_filed": with_traces(build_result(n_cases)),
        "packed_in_the_store": with_traces(build_result(n_cases)),
    }
    seconds: dict[str, list[float]] = {name: [] for name, _ in VARIANTS}
    for attempt in range(repeats + 1):
        for name, prepare in VARIANTS:
            result = _fresh(results[name], f"{name}-{attempt}")
            if prepare is not None:
                prepare(result)
            started = time.perf_counter()
            store.record_run(result)
            if attempt:  # the first of each is a warm-up (the dataset's rows, caches)
                seconds[name].append(time.perf_counter() - started)
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    return {
        "cases": n_cases,
        "seconds": {name: [round(s, 3) for s in values] for name, values in seconds.items()},
        "medians": {name: round(value, 3) for name, value in medians.items()},
        "ratios": {name: round(value / medians["without"], 2) for name, value in medians.items()},
    }


def transcript_work(n_cases: int) -> dict[str, Any]:
    """Per case, the transcript's own work as the writer does it, and its size."""
    import pickle

    from oloproof_core import canonical_json

    traces = [agent_trace(index) for index in range(n_cases)]
    started = time.perf_counter()
    texts = [canonical_json(trace.to_dict()) for trace in traces]
    canonical_s = time.perf_counter() - started
    started = time.perf_counter()
    for trace in traces:
        trace.digest()
    digest_s = time.perf_counter() - started
    started = time.perf_counter()
    sizes = [len(zlib.compress(text.encode("utf-8"), 6)) for text in texts]
    zlib6_s = time.perf_counter() - started
    unpacked = pickle.dumps(traces)
    started = time.perf_counter()
    kept = [trace.packed() for trace in traces]
    packed_s = time.perf_counter() - started
    micro = 1e6 / n_cases
    return {
        "json_bytes_per_case": round(statistics.mean(len(t.encode()) for t in texts)),
        "zlib6_bytes_per_case": round(statistics.mean(sizes)),
        "stored_bytes_per_case": round(statistics.mean(len(row.compressed) for row in kept)),
        "pickled_bytes_per_case": round(len(unpacked) / n_cases),
        "pickled_packed_bytes_per_case": round(len(pickle.dumps(traces)) / n_cases),
        "canonical_json_us": round(canonical_s * micro, 1),
        "digest_us": round(digest_s * micro, 1),
        "zlib6_us": round(zlib6_s * micro, 1),
        "packing_us": round(packed_s * micro, 1),
    }


def time_case_page(repeats: int) -> dict[str, Any]:
    """Server time of the case page of a case with a 200-step transcript."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from runs.store import DjangoStore

    result = build_result(3)
    trace = agent_trace(0, rounds=4)
    while len(trace.steps) < 200:
        trace.steps.extend(agent_trace(len(trace.steps)).steps[1:])
    del trace.steps[200:]
    result.cases[1].trace = trace
    run_id = DjangoStore().record_run(_fresh(result, "page"))
    user = get_user_model().objects.create_superuser("bench", password="bench-agents")
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    path = f"/runs/{run_id}/cases/{result.cases[1].id}"
    assert client.get(path).status_code == 200  # warm: templates compiled
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        response = client.get(path)
        seconds.append(time.perf_counter() - started)
        assert response.status_code == 200
        assert b"200 steps" in response.content
    seconds.sort()
    return {
        "steps": 200,
        "p50_ms": round(1000 * statistics.median(seconds), 1),
        "p95_ms": round(1000 * seconds[int(0.95 * (len(seconds) - 1))], 1),
        "html_kb": round(len(response.content) / 1000),
    }


def measure(n_cases: int, repeats: int, page_repeats: int) -> dict[str, Any]:
    import django

    os.environ["DJANGO_SETTINGS_MODULE"] = "evalsite.settings"
    django.setup()
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)
    return {
        "recording": time_recordings(n_cases, repeats),
        "transcript": transcript_work(n_cases),
        "case_page": time_case_page(page_repeats),
        "load_average": round(os.getloadavg()[0], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.agents", description=__doc__)
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--page-repeats", type=int, default=30)
    parser.add_argument("--out", default="", help="also write the figures to this JSON file")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.cases, args.repeats, args.page_repeats)))
        return
    with tempfile.TemporaryDirectory(prefix="oloproof-bench-agents-") as data_dir:
        env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
        env["OLOPROOF_DATA_DIR"] = data_dir
        command = [sys.executable, "-m", "bench.agents", "--child", "--cases", str(args.cases)]
        command += ["--repeats", str(args.repeats), "--page-repeats", str(args.page_repeats)]
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench.agents failed:\n{done.stderr}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    if args.out:
        Path(args.out).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
