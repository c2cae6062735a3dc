"""The embedded default: `oloproof serve` starts the site and a worker on the file-system
broker in the data folder, and `oloproof run --submit --wait` follows a run to its table."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

import pytest

from oloproof.cli import main
from tests.support.platform import free_port, platform, server_ready, wait_until, write_project

N_CASES = 30

# The embedded default is SQLite and a folder broker: the PostgreSQL pass has nothing to add.
pytestmark = pytest.mark.one_database


@pytest.mark.slow
def test_serve_and_submit_wait_run_a_config_end_to_end_without_a_broker_server(
    tmp_path: Path,
) -> None:
    config = write_project(tmp_path / "project", n_cases=N_CASES, concurrency=4)
    with platform(tmp_path, broker_url="filesystem://localhost/", chunk_size=12) as running:
        port = free_port()
        serve = running.start(["serve", f"--port={port}", "--worker-concurrency=1"], name="serve")
        wait_until(lambda: server_ready(port), timeout=60, what="oloproof serve")

        done = running.call(["run", str(config), "--submit", "--wait"])

        assert done.returncode == 0, done.stderr + running.log_text()
        assert "queue-bot@1" in done.stdout
        table = {line.split()[0]: line.split() for line in done.stdout.splitlines() if line}
        assert table["exact_label"][5] == "2"  # missing: cases 5 and 22 raise
        assert table["short_label"][4] == str(N_CASES - 2)  # observed
        assert f"succeeded {N_CASES}/{N_CASES} cases" in done.stderr
        queued = re.search(r"run #(\d+) queued", done.stderr)
        assert queued is not None, done.stderr
        run_id = int(queued.group(1))
        assert "hostname" not in done.stderr  # no broker chatter in the output
        assert sorted(running.database.case_ids(run_id)) == [
            f"case_{i:05d}" for i in range(N_CASES)
        ]
        assert running.database.chunk_counts(run_id) == {"done": 3}
        # A message sent as the run ended (a second chunk's finaliser) may not be taken yet.
        queue = running.data_dir / "broker" / "queue"
        wait_until(lambda: not list(queue.glob("*.msg")), timeout=60, what="the queue to empty")

        # SIGTERM to `serve` alone stops the worker it started, too.
        os.kill(serve.pid, signal.SIGTERM)
        assert serve.wait(timeout=60) == 0
        workers = [p for p in Path("/proc").iterdir() if p.name.isdigit()]
        assert not any(
            str(running.data_dir) in _environ(p) and b"worker" in _cmdline(p) for p in workers
        )


def _cmdline(process: Path) -> bytes:
    try:
        return (process / "cmdline").read_bytes()
    except OSError:
        return b""


def _environ(process: Path) -> str:
    try:
        return (process / "environ").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def test_wait_without_submit_is_refused_with_advice(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "oloproof.yaml", "--wait"]) == 3
    assert "--wait follows a submitted run: use it with --submit" in capsys.readouterr().err
