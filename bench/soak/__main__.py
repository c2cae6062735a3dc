"""Soak: many small runs submitted through the REST API, with a worker killed mid-way.

Starts the web process (`oloproof serve --no-worker`) and worker processes against
PostgreSQL and Redis, submits `--runs` runs of `--cases` cases each over HTTP with an
API token (several submitters at once), SIGKILLs one worker half-way and starts a
fresh one, then waits until every run has finished. It passes only if every run
succeeded and every case of every run is recorded exactly once.

Run: .venv/bin/python -m bench.soak [--runs 200] [--cases 20] [--workers 2]
Writes bench/results/soak.json.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench._platform import django_on, drop_database, fresh_database
from bench.workers.__main__ import start_workers, stop_workers, wait_for_workers

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "bench" / "results"
DATABASE = "oloproof_bench_soak"

SYSTEM = """
import time

from oloproof import system


@system(name="soak-bot", version="1")
def answer(case):
    time.sleep(0.005)
    return {"label": "refund" if "refund" in case["question"] else "other"}
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def write_datasets(folder: Path, *, count: int, cases: int) -> list[str]:
    """A few distinct datasets, so runs share some and differ in others."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.py").write_text(SYSTEM, encoding="utf-8")
    names = []
    for index in range(count):
        name = f"data-{index}.jsonl"
        with (folder / name).open("w", encoding="utf-8") as handle:
            for i in range(cases):
                refund = (i + index) % 2 == 0
                handle.write(
                    json.dumps(
                        {
                            "id": f"c{i:04d}",
                            "input": {
                                "question": f"{'refund' if refund else 'parcel'} {index}/{i}"
                            },
                            "expected": {"label": "refund" if refund else "other"},
                        }
                    )
                    + "\n"
                )
        names.append(name)
    return names


def api(base: str, token: str, method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        base + path,
        data=data,
        method=method,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def wait_for_http(base: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(base + "/accounts/login/", timeout=2)
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the web process did not answer")


def issue_token() -> str:
    from django.contrib.auth.models import Permission, User

    from runs.writers.tokens import api_token_create

    user, _ = User.objects.get_or_create(username="soak")
    user.user_permissions.add(Permission.objects.get(codename="add_run"))
    _, token = api_token_create(user=user, name="soak")
    return str(token)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--submitters", type=int, default=4)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/14")
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="oloproof-soak-"))
    env = {
        **os.environ,
        "DATABASE_URL": fresh_database(args.postgres, DATABASE),
        "CELERY_BROKER_URL": args.redis,
        "OLOPROOF_DATA_DIR": str(work / "data"),
        "OLOPROOF_CHUNK_SIZE": "10",
        "OLOPROOF_CHUNK_STALE_AFTER": "10",
        "OLOPROOF_SWEEP_INTERVAL": "5",
        "PYTHONPATH": str(REPO),
        "DJANGO_SETTINGS_MODULE": "evalsite.settings",
    }
    django_on(env, args.redis)
    from django.db.models import Count

    from runs.models import CaseResult, Run

    token = issue_token()
    datasets = write_datasets(work / "project", count=5, cases=args.cases)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    web = subprocess.Popen(
        [sys.executable, "-m", "oloproof", "serve", "--no-worker", f"--port={port}"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(work / "web.log").open("ab"),
        start_new_session=True,
    )
    workers = start_workers(args.workers, env, work)
    killed = 0
    try:
        wait_for_http(base)
        wait_for_workers(args.workers)
        started = time.perf_counter()

        def submit(index: int) -> int:
            config = {
                "system": "bot.py:answer",
                "dataset": datasets[index % len(datasets)],
                "evaluators": [{"ExactMatch": {"criterion": "exact_label", "field": "label"}}],
            }
            reply = api(
                base,
                token,
                "POST",
                "/api/runs",
                {"config": config, "base_dir": str(work / "project")},
            )
            return int(reply["id"])

        with ThreadPoolExecutor(args.submitters) as pool:
            run_ids = list(pool.map(submit, range(args.runs)))
        submitted_s = time.perf_counter() - started
        deadline = time.monotonic() + args.timeout
        while True:
            done = Run.objects.filter(
                pk__in=run_ids, status__in=[Run.Status.SUCCEEDED, Run.Status.FAILED]
            )
            finished = done.count()
            if not killed and finished >= len(run_ids) // 2:
                os.killpg(workers[0].pid, signal.SIGKILL)
                workers[0].wait()
                workers[0:1] = start_workers(1, env, work)
                killed = 1
            if finished == len(run_ids):
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"only {finished} of {len(run_ids)} runs finished in time")
            time.sleep(0.5)
        seconds = time.perf_counter() - started
    finally:
        stop_workers(workers)
        os.killpg(web.pid, signal.SIGTERM)
        web.wait(timeout=30)

    runs = Run.objects.filter(pk__in=run_ids)
    failed = list(runs.exclude(status=Run.Status.SUCCEEDED).values_list("pk", "error"))
    per_run = dict(
        CaseResult.objects.filter(run__in=run_ids)
        .values_list("run")
        .annotate(n=Count("id"))
        .values_list("run", "n")
    )
    wrong_counts = {run: n for run, n in per_run.items() if n != args.cases}
    missing_runs = set(run_ids) - set(per_run)
    report = {
        "runs": len(run_ids),
        "cases_per_run": args.cases,
        "workers": args.workers,
        "worker_killed_mid_soak": bool(killed),
        "submit_seconds": round(submitted_s, 2),
        "seconds": round(seconds, 2),
        "runs_per_minute": round(60 * len(run_ids) / seconds, 1),
        "runs_failed": len(failed),
        "runs_with_wrong_case_count": len(wrong_counts),
        "runs_without_cases": len(missing_runs),
        "case_results": sum(per_run.values()),
    }
    from django.db import connections

    connections.close_all()
    drop_database(args.postgres, DATABASE)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "soak.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))
    if failed or wrong_counts or missing_runs:
        raise SystemExit(
            f"soak lost work: failed={failed[:5]} wrong={list(wrong_counts)[:5]} "
            f"missing={sorted(missing_runs)[:5]}"
        )


if __name__ == "__main__":
    main()
