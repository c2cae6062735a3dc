"""The dashboard's main pages at 1,280 × 800, on the demo's history, for docs/dashboard.md.

    .venv/bin/python scripts/dashboard_screenshots.py [--out docs/img]

Records the demo in a fresh folder (`oloproof demo --no-serve`), serves it
(`oloproof serve --no-worker`), signs in as the demo approver in headless Chromium and
saves one PNG per page. Needs the test extras (Playwright) and Debian's chromium, which
`bash scripts/test.sh` installs.
"""

from __future__ import annotations

import argparse
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
BIN = Path(sys.executable).parent
PAGES = (
    ("runs", "/", None),
    ("run", "/runs/{decide}/", None),
    ("gates", "/gates/", None),
    ("compare", "/compare/?baseline={baseline}&candidate={decide}", None),
    ("system", "/systems/", "table a[href^='/systems/']"),
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/img", help="folder for the PNG files")
    out = Path(parser.parse_args().out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        story = _record(Path(folder))
        port = _free_port()
        server = subprocess.Popen(
            [str(BIN / "oloproof"), "serve", "--no-worker", f"--port={port}"],
            cwd=folder,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_for(port)
            _shoot(f"http://127.0.0.1:{port}", story, out)
        finally:
            server.terminate()
            server.wait(timeout=60)
    return 0


def _record(folder: Path) -> dict[str, str]:
    """The demo's history, and the run numbers its story names."""
    done = subprocess.run(
        [str(BIN / "oloproof"), "demo", "--no-serve"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    )
    decide = re.search(r"decide\s+\S+ \(run (\d+)\)", done.stdout)
    baseline = re.search(r"baseline\s+\S+ \(run (\d+)\)", done.stdout)
    if decide is None or baseline is None:
        raise SystemExit(f"the demo did not say where to look first:\n{done.stdout}")
    return {"decide": decide.group(1), "baseline": baseline.group(1)}


def _shoot(base: str, story: dict[str, str], out: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        page.goto(base + "/accounts/login/")
        page.fill("input[name=username]", "demo")
        page.fill("input[name=password]", "oloproof-demo")
        page.click("button[type=submit]")
        page.wait_for_url(re.compile(r".*/$"))
        for name, path, follow in PAGES:
            page.goto(base + path.format(**story))
            if follow is not None:
                page.click(follow)
            page.wait_for_load_state("networkidle")
            page.screenshot(path=str(out / f"{name}.png"))
            print(f"{out / f'{name}.png'}  {page.url.removeprefix(base)}")
        browser.close()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for(port: int) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise SystemExit("the dashboard did not start within 120 s")


if __name__ == "__main__":
    raise SystemExit(main())
