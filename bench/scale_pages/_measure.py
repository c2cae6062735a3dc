"""Start the real server on the seeded store, sign in over HTTP, time each page.

The server is `oloproof serve --no-worker` (waitress, as deployed) with
`OLOPROOF_SERVER_TIMING=1`; each response's `Server-Timing: app;dur=` is the
application's own time. The pages are requested in turns (one round visits every
page once), so the machine's load at any moment falls on all of them alike.
"""

from __future__ import annotations

import http.client
import math
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TARGET_P50_MS, TARGET_P99_MS = 150.0, 500.0
FLOOR = "floor: the sign-in page (reads nothing of the history)"
"""Requested in the same rounds: what the server and the machine cost at that moment."""
_TIMING = re.compile(r"app;dur=([0-9.]+)")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_start(data_dir: str, database_url: str, port: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "OLOPROOF_DATA_DIR": data_dir,
        "DATABASE_URL": database_url,
        "OLOPROOF_SERVER_TIMING": "1",
        "DJANGO_DEBUG": "0",
    }
    command = [sys.executable, "-m", "oloproof", "serve", "--no-worker", "--port", str(port)]
    log = open(Path(data_dir) / "server.log", "ab")  # noqa: SIM115 (the server's for its life)
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 900  # the first start migrates (and counts) the store
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server stopped ({server.returncode}); see {log.name}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server
        except OSError:
            time.sleep(0.5)
    server.terminate()
    raise RuntimeError("the server did not listen within 15 minutes")


class Browser:
    """One keep-alive connection with the session's cookies, as a signed-in reader."""

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, body: str | None = None) -> tuple[int, dict, bytes]:
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        if body is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        self.connection.request(method, path, body=body, headers=headers)
        response = self.connection.getresponse()
        content = response.read()
        for name, value in response.getheaders():
            if name.lower() == "set-cookie":
                key, _, rest = value.partition("=")
                self.cookies[key] = rest.split(";", 1)[0]
        return response.status, dict(response.getheaders()), content

    def sign_in(self, username: str, password: str) -> None:
        _, _, page = self.request("GET", "/accounts/login/")
        found = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert found, "no sign-in form"
        form = {
            "username": username,
            "password": password,
            "csrfmiddlewaretoken": found.group(1).decode(),
        }
        status, _, _ = self.request("POST", "/accounts/login/", urllib.parse.urlencode(form))
        if status != 302 or "sessionid" not in self.cookies:
            raise RuntimeError(f"signing in as {username} answered {status}")


def deep_cursor(database_url: str, run_id: int, position: int) -> str:
    """The cursor of a page starting after `position` of the run (the table's own token)."""
    import psycopg

    from runs.selectors.keyset import cursor_encode

    with psycopg.connect(database_url) as connection:
        row = connection.execute(
            "SELECT position, id FROM runs_caseresult WHERE run_id = %s AND position = %s",
            [run_id, position],
        ).fetchone()
    assert row is not None, f"run {run_id} has no case at position {position}"
    return cursor_encode((row[0], row[1]))


def pages(seeded: dict[str, Any], browser: Browser) -> dict[str, str]:
    big, second = seeded["large_runs"]
    n = seeded["large_cases"]
    deep = deep_cursor(seeded["database_url"], big, n * 9 // 10)
    cases = f"/runs/{big}/cases/"
    _, _, first = browser.request("GET", "/")
    found = re.search(rb'class="pager-next" rel="next" href="\?after=([^"]+)"', first)
    assert found, "the runs list has no next page"
    return {
        FLOOR: "/accounts/login/",
        "runs: first page (10,000 runs)": "/",
        "runs: next page (cursor)": f"/?after={found.group(1).decode()}",
        "runs: filtered (system, gate)": "/?system=bot-2&gate=fail",
        f"run: the {n:,}-case run": f"/runs/{big}/",
        "run: a typical run (50 cases)": f"/runs/{seeded['history']['typical_run']}/",
        "cases: first page": cases,
        "cases: only failed": f"{cases}?outcome=failed",
        "cases: one criterion's failures": f"{cases}?criterion=exact_label&outcome=failed",
        "cases: one criterion's missing": f"{cases}?criterion=known_label&outcome=missing",
        f"cases: search, a rare word ({seeded['rare_word']})": f"{cases}?q={seeded['rare_word']}",
        f"cases: search, a word in 1 case of 7 ({seeded['common_word']})": (
            f"{cases}?q={seeded['common_word']}"
        ),
        "cases: deep page (cursor at 90 %)": f"{cases}?after={deep}",
        "cases: deep page, an earlier ?page= link (page 18,000)": f"{cases}?page=18000",
        "API: cases, deep page (cursor at 90 %)": f"/api/runs/{big}/cases?limit=100&after={deep}",
        "API: runs, first page": "/api/runs?limit=50",
        f"compare: {n:,} vs {n:,} cases": f"/compare/?baseline={big}&candidate={second}",
        f"compare: {n:,} vs {n:,}, grid page 2": (
            f"/compare/?baseline={big}&candidate={second}&page=2"
        ),
        "gates: pending and audit": "/gates/",
    }


def percentile(sorted_values: list[float], share: float) -> float:
    """Nearest rank: the smallest value with at least `share` of the values at or below it."""
    return sorted_values[max(0, math.ceil(share * len(sorted_values)) - 1)]


def timed_rounds(
    browser: Browser, paths: dict[str, str], repeats: int
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Server times (ms) per page over `repeats` rounds, and each page's first request."""
    times: dict[str, list[float]] = {name: [] for name in paths}
    first: dict[str, float] = {}
    for round_number in range(repeats + 1):
        for name, path in paths.items():
            status, headers, _ = browser.request("GET", path)
            assert status == 200, f"{name}: GET {path} answered {status}"
            timing = _TIMING.search(headers.get("Server-Timing", ""))
            assert timing, f"{name}: no Server-Timing header (is OLOPROOF_SERVER_TIMING on?)"
            if round_number == 0:
                first[name] = float(timing.group(1))  # a cold cache: reported apart
            else:
                times[name].append(float(timing.group(1)))
        if round_number % 10 == 0:
            print(f"  round {round_number}/{repeats}", flush=True)
    return times, first


def measure_pages(
    *, data_dir: str, seeded: dict[str, Any], repeats: int, only: str = ""
) -> dict[str, Any]:
    port = free_port()
    started = time.perf_counter()
    server = server_start(data_dir, seeded["database_url"], port)
    print(f"server up in {time.perf_counter() - started:.0f} s on port {port}", flush=True)
    try:
        browser = Browser(port)
        browser.sign_in("bench", "bench-password-long")
        paths = {
            name: path
            for name, path in pages(seeded, browser).items()
            if only in name or name == FLOOR
        }
        load_before = os.getloadavg()
        times, first = timed_rounds(browser, paths, repeats)
        load_after = os.getloadavg()
    finally:
        server.terminate()
        server.wait(timeout=60)
    rows = []
    floor = statistics.median(times[FLOOR])
    for name, path in paths.items():
        values = sorted(times[name])
        p50, p99 = statistics.median(values), percentile(values, 0.99)
        rows.append(
            {
                "page": name,
                "path": path if len(path) < 120 else path[:117] + "...",
                "p50_ms": round(p50, 1),
                "p99_ms": round(p99, 1),
                "max_ms": round(values[-1], 1),
                "first_ms": round(first[name], 1),
                "p50_over_floor": round(p50 / floor, 1),
                "within_target": p50 <= TARGET_P50_MS and p99 <= TARGET_P99_MS,
            }
        )
        mark = "" if rows[-1]["within_target"] else "  (over target)"
        print(
            f"{name:58s} p50 {p50:7.1f}  p99 {p99:7.1f}  max {values[-1]:7.1f}  "
            f"first {first[name]:7.1f} ms  {p50 / floor:5.1f}x floor{mark}",
            flush=True,
        )
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.node()}, {os.cpu_count()} cores, {platform.platform()}",
        "load_average_before_after": [round(load_before[0], 1), round(load_after[0], 1)],
        "repeats": repeats,
        "large_cases": seeded["large_cases"],
        "large_runs": seeded["large_runs"],
        "seed_s": seeded.get("seed_s"),
        "target": {"p50_ms": TARGET_P50_MS, "p99_ms": TARGET_P99_MS},
        "pages": rows,
    }
