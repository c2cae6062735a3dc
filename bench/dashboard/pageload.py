"""Cold page loads in Chromium: time to the load event of chart pages and a plain page.

Records the demo history (`oloproof demo --no-serve`) in a fresh data folder, serves
it with `oloproof serve --no-worker` on 127.0.0.1, signs in once, then opens each page
in a fresh browser context carrying only the session cookie (an empty HTTP cache:
every script and stylesheet is fetched) and reads the load event's time from the
page's navigation timing. A second load in the same context shows the cached case.
`--repo` serves another checkout's code (e.g. the main branch, for a before/after).

Run: .venv/bin/python -m bench.dashboard.pageload [--repeats 5] [--repo PATH]
Writes bench/results/pageload.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench._platform import serve_dashboard

RESULTS = Path(__file__).resolve().parents[1] / "results"
REPO = Path(__file__).resolve().parents[2]
TARGET_MS = 500.0
FLOOR = "sign-in page (floor)"
"""The smallest page with the site's stylesheet and script: what the machine costs alone."""
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
LOAD_EVENT = "performance.getEntriesByType('navigation')[0].loadEventEnd"
TRANSFERRED = (
    "performance.getEntriesByType('resource').concat(performance.getEntriesByType('navigation'))"
    ".reduce((sum, entry) => sum + (entry.transferSize || 0), 0)"
)


def serve(repo: Path, folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env.update(OLOPROOF_DATA_DIR=str(folder / "data"), PYTHONPATH=str(repo))
    env.pop("OLOPROOF_STATIC_ROOT", None)
    command = [sys.executable, "-m", "oloproof"]
    subprocess.run(
        [*command, "demo", "--no-serve"], cwd=folder, env=env, check=True, stdout=subprocess.DEVNULL
    )
    return serve_dashboard(env, folder)


def signed_in_state(browser: Any, base: str) -> Any:
    context = browser.new_context()
    page = context.new_page()
    page.goto(base + "/accounts/login/")
    page.fill("input[name=username]", "demo")
    page.fill("input[name=password]", "oloproof-demo")
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/$"))
    links = page.eval_on_selector_all(
        "a[href^='/runs/']", "links => links.map(link => link.getAttribute('href'))"
    )
    runs = sorted({int(m.group(1)) for href in links if (m := re.fullmatch(r"/runs/(\d+)/", href))})
    state = context.storage_state()
    context.close()
    return state, runs


def measure(browser: Any, state: Any, url: str, repeats: int) -> dict[str, Any]:
    cold, warm, sizes, plotly = [], [], [], False
    for _ in range(repeats):
        context = browser.new_context(storage_state=state)
        page = context.new_page()
        page.goto(url, wait_until="load")
        cold.append(float(page.evaluate(LOAD_EVENT)))
        sizes.append(int(page.evaluate(TRANSFERRED)))
        plotly = bool(page.evaluate("typeof window.Plotly !== 'undefined'"))
        page.goto(url, wait_until="load")
        warm.append(float(page.evaluate(LOAD_EVENT)))
        context.close()
    return {
        "cold_median_ms": round(statistics.median(cold), 1),
        "cold_max_ms": round(max(cold), 1),
        "warm_median_ms": round(statistics.median(warm), 1),
        "cold_transferred_kb": round(statistics.median(sizes) / 1024, 1),
        "plotly": plotly,
    }


def report(name: str, row: dict[str, Any], floor_ms: float) -> None:
    row["cold_over_floor"] = round(row["cold_median_ms"] / floor_ms, 2)
    mark = "" if row["cold_median_ms"] <= TARGET_MS else "  (over target)"
    print(
        f"{name:24s} cold {row['cold_median_ms']:7.1f} ms (max {row['cold_max_ms']:7.1f}, "
        f"{row['cold_over_floor']:4.1f}x floor)  warm {row['warm_median_ms']:6.1f} ms  "
        f"{row['cold_transferred_kb']:8.1f} KB  plotly={row['plotly']}{mark}",
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout to serve")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    folder = Path(tempfile.mkdtemp(prefix="oloproof-bench-pageload-"))
    process, base = serve(args.repo.resolve(), folder)
    results: dict[str, Any] = {}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            state, runs = signed_in_state(browser, base)
            pages = {
                FLOOR: "/accounts/login/",
                "runs list (no chart)": "/",
                "run page (charts)": f"/runs/{runs[-1]}/",
                "system page (chart)": "/systems/1/",
                "compare (chart)": f"/compare/?baseline={runs[0]}&candidate={runs[-1]}",
            }
            for name, path in pages.items():
                results[name] = {"path": path, **measure(browser, state, base + path, args.repeats)}
                report(name, results[name], results[FLOOR]["cold_median_ms"])
            browser.close()
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "pageload.json").write_text(
        json.dumps(
            {
                "repo": str(args.repo),
                "repeats": args.repeats,
                "target_cold_ms": TARGET_MS,
                "pages": results,
            },
            indent=2,
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
