"""The review queue page against a real server, with 10,000 cases in the run.

Records, in a fresh data folder through `evaluate()` and the project's store, a run
of N cases judged by a metric file that asks a model (`_review_seed.py`); makes a
runner with `oloproof user create`; serves the folder with `oloproof serve
--no-worker` (waitress, 8 threads) on 127.0.0.1; signs in over one keep-alive
connection, then:

- first view: the queue's first request, which computes the cases' drawing
  probabilities and records the sample;
- the page with no label yet: `requests` GETs, each in turns with the sign-in page
  (the floor: what the machine and Django cost at that moment);
- labelling: `LABELS` (50) cases through the page's own form (a POST of the case shown,
  answered 303, and the GET of the next draw a browser follows), counting HTTP
  requests per label;
- the page again with those labels in (the combined interval computed on each view);
- the run's metric page (the judge's figure beside the combined one), 20 requests.

Times are from sending the request to reading the whole answer, on the loopback.
Recording, the account and the server run `repo`'s code (default: this checkout;
e.g. a `git archive` of a commit, to measure committed code only).
"""

from __future__ import annotations

import math
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._platform import serve_dashboard

from ._http import Browser

REPO = Path(__file__).resolve().parents[2]
SEED_SCRIPT = Path(__file__).resolve().with_name("_review_seed.py")
METRIC = "greeting"
LABELS = 50
USER, PASSWORD = "reviewer", "bench-review-5Qx!k2"
FLOOR = "/accounts/login/"
HIDDEN = re.compile(r'<input type="hidden" name="(case_id|position)" value="([^"]*)"')


def _environment(repo: Path, folder: Path) -> dict[str, str]:
    """The served checkout first on the path, the fresh data folder as the store."""
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env.update(
        OLOPROOF_DATA_DIR=str(folder / "data"), PYTHONPATH=str(repo), OLOPROOF_SERVER_TIMING="1"
    )
    env.pop("OLOPROOF_STATIC_ROOT", None)
    return env


def _seed(env: dict[str, str], folder: Path, cases: int) -> int:
    done = subprocess.run(
        [sys.executable, str(SEED_SCRIPT), str(folder), str(cases)],
        cwd=folder,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout.split()[-1])


def _oloproof(env: dict[str, str], folder: Path, *args: str, stdin: str = "") -> None:
    subprocess.run(
        [sys.executable, "-m", "oloproof", *args],
        cwd=folder,
        env=env,
        input=stdin.encode(),
        check=True,
        stdout=subprocess.DEVNULL,
    )


def _summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)

    def rank(p: float) -> float:
        return round(ordered[max(0, math.ceil(p * len(ordered)) - 1)], 1)

    return {
        "n": len(ordered),
        "p50_ms": round(statistics.median(ordered), 1),
        "p90_ms": rank(0.90),
        "p99_ms": rank(0.99),
        "max_ms": round(ordered[-1], 1),
    }


def _page_times(browser: Browser, path: str, repeats: int) -> dict[str, Any]:
    """The page and the floor in turns, `repeats` each."""
    times, floors, server = [], [], []
    for _ in range(repeats):
        floors.append(browser.get(FLOOR).ms)
        answer = browser.get(path)
        if answer.status != 200:
            raise SystemExit(f"{path} answered {answer.status}")
        times.append(answer.ms)
        if answer.server_ms is not None:
            server.append(answer.server_ms)
    page = _summary(times)
    in_server = _summary(server) if server else None
    return {
        **page,
        "server": in_server,
        "floor": _summary(floors),
        "bytes": len(answer.body.encode()),
    }


def _shown(body: str) -> dict[str, str]:
    found = dict(HIDDEN.findall(body))
    if "case_id" not in found:
        raise SystemExit("the review page shows no case to label")
    return found


def _labelling(browser: Browser, path: str, count: int) -> dict[str, Any]:
    """Label `count` draws through the page's form; times and requests per label."""
    body = browser.get(path).body
    posts, follows, totals, requests = [], [], [], []
    for k in range(count):
        shown = _shown(body)
        before = browser.requests
        value = "0" if k % 7 == 0 else "1"
        posted = browser.post(path, {**shown, "value": value, "note": ""})
        if posted.status != 303:
            raise SystemExit(f"labelling answered {posted.status}: {posted.body[:300]}")
        follow = browser.get(posted.location)
        body = follow.body
        requests.append(browser.requests - before)
        posts.append(posted.ms)
        follows.append(follow.ms)
        totals.append(posted.ms + follow.ms)
    return {
        "labels": count,
        "requests_per_label": sorted(set(requests)),
        "post": _summary(posts),
        "next_page": _summary(follows),
        "label_to_next_case": _summary(totals),
    }


def _measure(base: str, run_id: int, repeats: int) -> dict[str, Any]:
    path = f"/runs/{run_id}/review/{METRIC}/"
    browser = Browser(base)
    try:
        browser.sign_in(USER, PASSWORD)
        first = browser.get(path)
        if first.status != 200:
            raise SystemExit(f"{path} answered {first.status}: {first.body[:300]}")
        return {
            "path": path,
            "first_view_ms": round(first.ms, 1),
            "no_labels": _page_times(browser, path, repeats),
            "labelling": _labelling(browser, path, LABELS),
            f"with_{LABELS}_labels": _page_times(browser, path, repeats),
            "metric_page": _page_times(browser, f"/runs/{run_id}/metrics/{METRIC}/", 20),
        }
    finally:
        browser.close()


def review_page(cases: int, repeats: int, repo: Path = REPO) -> dict[str, Any]:
    """Seed, serve `repo`'s code, measure; the figures as a dict."""
    folder = Path(tempfile.mkdtemp(prefix="oloproof-bench-labels-"))
    env = _environment(repo, folder)
    begin = time.perf_counter()
    run_id = _seed(env, folder, cases)
    seeded_s = time.perf_counter() - begin
    print(f"recorded run {run_id}: {cases:,} judged cases in {seeded_s:.0f} s ({folder})")
    _oloproof(env, folder, "user", "create", USER, "--password-stdin", stdin=PASSWORD + "\n")
    process, base = serve_dashboard(env, folder)
    try:
        figures = _measure(base, run_id, repeats)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    return {
        "repo": str(repo),
        "cases": cases,
        "requests": repeats,
        "seed_s": round(seeded_s, 1),
        **figures,
    }
