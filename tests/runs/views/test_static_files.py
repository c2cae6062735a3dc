"""Static files: `oloproof serve` serves them hashed, gzipped and cached for a year, and
plotly.js is loaded by chart pages only."""

from __future__ import annotations

import gzip
import re
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from evalsite.static_files import ONE_YEAR_S
from runs.models import Run
from tests.runs.conftest import record_evaluation
from tests.support.embedded import embedded_store_env
from tests.support.platform import REPO, free_port, server_ready, wait_until

# Static files are served from files, whatever the database.
pytestmark = pytest.mark.one_database


@dataclass(frozen=True)
class Served:
    url: str
    static_root: Path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A real `oloproof serve` on a fresh data folder (nothing collected before it starts)."""
    root = tmp_path_factory.mktemp("static")
    env = embedded_store_env(root / "data", record=None)
    env["PYTHONPATH"] = str(REPO)
    env.pop("OLOPROOF_STATIC_ROOT", None)
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "oloproof", "serve", "--no-worker", f"--port={port}"],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_until(lambda: server_ready(port), timeout=120, what="oloproof serve")
        yield Served(url=f"http://127.0.0.1:{port}", static_root=root / "data" / "static")
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


def fetch(url: str, **headers: str) -> tuple[dict[str, str], bytes]:
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as reply:
        return dict(reply.headers.items()), reply.read()


GZIP = {"Accept-Encoding": "gzip"}


def test_served_static_files_have_hashed_names_gzip_and_a_year_of_cache(served: Served) -> None:
    _, page = fetch(served.url + "/accounts/login/")
    stylesheet = re.search(rb'href="(/static/oloproof\.[0-9a-f]{12}\.css)"', page)
    assert stylesheet is not None, page[:2000]
    headers, body = fetch(served.url + stylesheet.group(1).decode(), **GZIP)
    assert headers["Content-Encoding"] == "gzip"
    assert headers["Cache-Control"] == f"max-age={ONE_YEAR_S}, public, immutable"
    assert ".topbar" in gzip.decompress(body).decode()


def test_plotly_js_is_served_compressed_under_its_hashed_name(served: Served) -> None:
    hashed = [path.name for path in (served.static_root / "vendor").glob("plotly-basic.min.*.js")]
    assert len(hashed) == 1, hashed
    assert re.fullmatch(r"plotly-basic\.min\.[0-9a-f]{12}\.js", hashed[0])
    headers, body = fetch(f"{served.url}/static/vendor/{hashed[0]}", **GZIP)
    assert headers["Content-Encoding"] == "gzip"
    assert headers["Cache-Control"] == f"max-age={ONE_YEAR_S}, public, immutable"
    assert len(body) < 500_000  # 1.2 MB uncompressed
    assert b"plotly" in gzip.decompress(body)[:2000].lower()
    # The plain name still answers (pages rendered before the files were collected link
    # it), but is not kept: it is the same URL whatever the file's content.
    plain, _ = fetch(served.url + "/static/vendor/plotly-basic.min.js", **GZIP)
    assert "immutable" not in plain["Cache-Control"]


@pytest.mark.django_db
def test_only_chart_pages_load_plotly(teammate: Any) -> None:
    run = Run.objects.get(pk=int(record_evaluation(12).run_id))
    client = Client()
    client.force_login(teammate)
    first_case = run.case_results.order_by("position").first()
    assert first_case is not None
    without_charts = [
        "/",
        f"/runs/{run.pk}/cases/",
        f"/runs/{run.pk}/cases/{first_case.case_id}",
        "/gates/",
        "/systems/",
        "/optimizations/",
        "/runs/new/",
        "/compare/",
    ]
    for path in without_charts:
        page = client.get(path, follow=True)
        assert page.status_code == 200, path
        assert b"plotly" not in page.content.lower(), path
    with_charts = [f"/runs/{run.pk}/", f"/systems/{run.release.system_id}/"]
    for path in with_charts:
        page = client.get(path)
        assert page.status_code == 200, path
        assert b"vendor/plotly-basic.min.js" in page.content, path


VENDORED_PLOTLY = Path(__file__).resolve().parents[3] / "static" / "vendor" / "plotly-basic.min.js"
BASIC_BUNDLE_TRACES = {"scatter", "bar", "pie"}


def test_the_vendored_plotly_js_matches_the_plotly_package_and_draws_every_chart() -> None:
    from plotly.offline import get_plotlyjs_version

    header = VENDORED_PLOTLY.read_text(encoding="utf-8")[:300]
    found = re.search(r"plotly\.js \(basic - minified\) v(\d+)\.(\d+)\.\d+", header)
    assert found is not None, header
    # Figures keep their schema within a major version of plotly.js.
    assert found.group(1) == get_plotlyjs_version().split(".")[0], (
        f"static/vendor/plotly-basic.min.js is v{found.group(1)}.{found.group(2)}, the plotly "
        f"package targets plotly.js {get_plotlyjs_version()}: replace the file with that "
        "release of the npm package plotly.js-basic-dist-min"
    )
    charts = Path(__file__).resolve().parents[3] / "metrics"
    used = {
        name.lower()
        for source in charts.glob("*.py")
        for name in re.findall(r"\bgo\.([A-Z]\w*)\(", source.read_text(encoding="utf-8"))
        if name not in {"Figure", "Layout"}
    }
    assert used, "no chart traces found in metrics/"
    assert used <= BASIC_BUNDLE_TRACES, f"traces outside plotly.js's basic bundle: {used}"
