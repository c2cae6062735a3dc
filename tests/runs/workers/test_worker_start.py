"""A worker whose broker or database does not answer says so, one line per attempt, waits
longer each time, and takes work once they answer; a database lost in the middle of a
chunk loses no case. Real processes: `oloproof worker`, redis-server, PostgreSQL behind a
forwarder the test can cut."""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.support.platform import (
    Platform,
    free_port,
    platform,
    redis_url,
    wait_until,
    write_project,
)
from tests.support.tcp_proxy import TcpProxy

pytestmark = [pytest.mark.redis, pytest.mark.slow]

SERVER_URL = os.environ.get("DATABASE_URL") or "postgresql://postgres@127.0.0.1:5432/postgres"
N_CASES = 6
CHUNK = 3


@contextmanager
def redis_server(port: int) -> Iterator[None]:
    """A redis-server of this test's own on `port`, without persistence."""
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""],
        stdout=subprocess.DEVNULL,
    )
    try:
        yield
    finally:
        process.kill()
        process.wait()


def log_of(running: Platform, name: str = "worker") -> str:
    return (running.logs / f"{name}.log").read_text(errors="replace")


def retry_lines(log: str, what: str) -> list[tuple[str, float]]:
    """(the reason, the wait announced) of each `cannot reach` line about `what`."""
    pattern = rf"^oloproof worker: cannot reach the {what} at (.+?) \((.+)\); retrying in (\S+) s"
    return [
        (f"{match[1]} ({match[2]})", float(match[3]))
        for match in re.finditer(pattern, log, flags=re.MULTILINE)
    ]


def wait_for_retries(
    running: Platform, worker: subprocess.Popen[bytes], what: str, count: int
) -> list[tuple[str, float]]:
    def seen() -> list[tuple[str, float]] | None:
        found = retry_lines(log_of(running), what)
        if len(found) < count and worker.poll() is not None:
            raise AssertionError(f"the worker ended ({worker.returncode}):\n{log_of(running)}")
        return found if len(found) >= count else None

    try:
        return list(wait_until(seen, timeout=90, what=f"{count} retries for the {what}"))
    except AssertionError:
        raise AssertionError(running.log_text()) from None


def assert_run_recorded_once(running: Platform, run_id: int) -> None:
    finished = running.wait_for_run(run_id, timeout=120)
    assert finished["status"] == "succeeded", finished["error"]
    case_ids = running.database.case_ids(run_id)
    assert sorted(case_ids) == [f"case_{i:05d}" for i in range(N_CASES)]
    assert running.database.chunk_counts(run_id) == {"done": N_CASES // CHUNK}


def test_a_worker_started_before_its_broker_says_so_retries_and_then_runs_chunks(
    tmp_path: Path,
) -> None:
    port = free_port()
    config = write_project(tmp_path / "project", n_cases=N_CASES, concurrency=1)
    with platform(tmp_path, broker_url=redis_url(port, 0), chunk_size=CHUNK) as running:
        running.migrate_server_database()
        worker = running.worker(concurrency=1)
        seen = wait_for_retries(running, worker, "broker", 2)
        assert worker.poll() is None
        refused = f"Error 111 connecting to 127.0.0.1:{port}. Connection refused."
        assert seen[0][0] == f"redis://127.0.0.1:{port}/0 ({refused})"
        assert [wait for _, wait in seen[:2]] == [1.0, 2.0]  # doubling

        with redis_server(port):
            run_id = running.submit(config)
            assert_run_recorded_once(running, run_id)
        assert "Traceback" not in log_of(running)


def proxied(url: str, port: int) -> str:
    """`url` with its host and port replaced by the forwarder's."""
    return re.sub(r"@[^/]+/", f"@127.0.0.1:{port}/", url)


@contextmanager
def platform_on_postgres(tmp_path: Path, broker_port: int) -> Iterator[tuple[Platform, TcpProxy]]:
    """A platform on a fresh PostgreSQL database, and a cut-able way to it for workers."""
    server = urlsplit(SERVER_URL)
    forwarder = TcpProxy((server.hostname or "127.0.0.1", server.port or 5432))
    with redis_server(broker_port):
        running = Platform(
            tmp_path, broker_url=redis_url(broker_port, 0), server_url=SERVER_URL, chunk_size=CHUNK
        )
        try:
            running.migrate_server_database()
            yield running, forwarder
        finally:
            running.stop_all()
            forwarder.cut()


@pytest.mark.postgres
@pytest.mark.one_database
def test_a_worker_whose_database_does_not_answer_says_so_retries_and_then_runs_chunks(
    tmp_path: Path,
) -> None:
    config = write_project(tmp_path / "project", n_cases=N_CASES, concurrency=1)
    with platform_on_postgres(tmp_path, free_port()) as (running, forwarder):
        assert running.database.url is not None
        through = proxied(running.database.url, forwarder.port)
        worker = running.start(
            ["worker", "--concurrency=1", "--loglevel=WARNING"],
            name="worker",
            extra_env={"DATABASE_URL": through},
        )
        seen = wait_for_retries(running, worker, "database", 2)
        assert worker.poll() is None
        where = f"127.0.0.1:{forwarder.port}/{running.database.name}"
        assert seen[0][0] == f"{where} (Connection refused)"
        assert [wait for _, wait in seen[:2]] == [1.0, 2.0]

        forwarder.open()
        run_id = running.submit(config)
        assert_run_recorded_once(running, run_id)
        assert "Traceback" not in log_of(running)


@pytest.mark.postgres
@pytest.mark.one_database
def test_a_database_lost_in_the_middle_of_a_chunk_loses_no_case(tmp_path: Path) -> None:
    config = write_project(tmp_path / "project", n_cases=N_CASES, sleep_ms=700, concurrency=1)
    with platform_on_postgres(tmp_path, free_port()) as (running, forwarder):
        assert running.database.url is not None
        forwarder.open()
        running.start(
            ["worker", "--concurrency=1", "--loglevel=WARNING"],
            name="worker",
            extra_env={"DATABASE_URL": proxied(running.database.url, forwarder.port)},
        )
        run_id = running.submit(config)
        wait_until(
            lambda: running.database.chunk_counts(run_id).get("claimed"),
            timeout=90,
            what="a chunk to be claimed",
        )
        forwarder.cut()  # the chunk's cases are still running (0.7 s each)
        time.sleep(3)
        assert running.database.chunk_counts(run_id).get("done", 0) == 0
        forwarder.open()

        assert_run_recorded_once(running, run_id)
        verdicts = running.database.value(
            "SELECT COUNT(*) FROM metrics_caseverdict WHERE run_id = ?", [run_id]
        )
        assert verdicts == 2 * N_CASES
        log = log_of(running)
        assert "sweeping for lost run work: cannot reach the database (" in log
        assert "sweeping for lost run work failed" not in log  # one line, not a traceback
        # The chunk's heartbeat says so once however many beats fail (none may fall in the
        # cut), never with its traceback. (Another line of the worker's log carried a
        # refused connection's traceback once in a dozen runs; its source is not found.)
        lost = re.findall(r"heartbeat of chunk \d+ of run \d+: lost the database", log)
        assert len(lost) <= 1
        assert not re.search(r"heartbeat of chunk \d+ of run \d+ failed", log)
