"""Faults during a multi-chunk run: a worker SIGKILLed mid-chunk, the broker restarted
empty. Either way the run completes with every case recorded exactly once."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.platform import (
    Platform,
    free_port,
    platform,
    redis_flush,
    redis_url,
    wait_until,
    write_project,
)

# Workers and a broker for minutes: the quick pass (`scripts/test.sh --quick`) leaves it out.
pytestmark = [pytest.mark.redis, pytest.mark.slow]

SHARED_REDIS_PORT = 6379
REDIS_DB = 12
N_CASES = 64
CHUNK = 8
# Each case sleeps 300 ms, one at a time per chunk: a chunk takes about 2.4 s, the run
# about ten seconds on two worker processes, long enough to fault in the middle even
# when submitting it takes seconds on a slow, busy machine (at 100 ms the run could
# pass its middle before `oloproof run --submit` returned).
SLEEP_MS = 300


def assert_every_case_recorded_once(running: Platform, run_id: int) -> None:
    finished = running.wait_for_run(run_id, timeout=180)
    assert finished["status"] == "succeeded", finished["error"]
    assert finished["cases_done"] == N_CASES
    case_ids = running.database.case_ids(run_id)
    assert len(case_ids) == N_CASES
    assert sorted(case_ids) == [f"case_{i:05d}" for i in range(N_CASES)]
    verdicts = running.database.value(
        "SELECT COUNT(*) FROM metrics_caseverdict WHERE run_id = ?", [run_id]
    )
    assert verdicts == 2 * N_CASES
    assert running.database.chunk_counts(run_id) == {"done": N_CASES // CHUNK}
    metrics = running.database.value(
        "SELECT COUNT(*) FROM metrics_metricestimate WHERE run_id = ?", [run_id]
    )
    assert metrics == 2


def mid_run(running: Platform, run_id: int) -> dict[str, int]:
    """Wait until some chunks are done and others are being worked on."""

    def started_not_finished() -> dict[str, int] | None:
        counts = running.database.chunk_counts(run_id)
        busy = counts.get("done", 0) >= 1 and counts.get("claimed", 0) >= 1
        return counts if busy and counts.get("pending", 0) >= 1 else None

    # Generous: on a slow machine under a full suite the workers take long to start.
    return dict(wait_until(started_not_finished, timeout=180, what="the run to be under way"))


def test_a_worker_killed_mid_run_is_replaced_and_no_case_is_lost_or_doubled(
    tmp_path: Path,
) -> None:
    redis_flush(SHARED_REDIS_PORT, REDIS_DB)
    config = write_project(tmp_path / "project", n_cases=N_CASES, sleep_ms=SLEEP_MS, concurrency=1)
    broker = redis_url(SHARED_REDIS_PORT, REDIS_DB)
    with platform(tmp_path, broker_url=broker, chunk_size=CHUNK) as running:
        running.migrate_server_database()
        first = running.worker(concurrency=2, name="first")
        run_id = running.submit(config)
        mid_run(running, run_id)

        running.kill(first)  # SIGKILL, pool processes included: no warm shutdown
        assert running.database.chunk_counts(run_id).get("claimed", 0) >= 1
        running.worker(concurrency=2, name="second")

        assert_every_case_recorded_once(running, run_id)
        attempts = running.database.value(
            "SELECT SUM(attempts) FROM runs_runchunk WHERE run_id = ?", [run_id]
        )
        assert attempts > N_CASES // CHUNK  # the killed worker's chunks ran again


class PrivateRedis:
    """A redis-server of this test's own, without persistence: a restart empties it."""

    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        self.process = subprocess.Popen(
            [*command, "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL
        )
        wait_until(lambda: ping(self.port), timeout=10, what="redis-server to start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    server = PrivateRedis()
    server.start()
    yield server
    server.stop()


def ping(port: int) -> bool:
    import redis

    try:
        return bool(redis.Redis(host="127.0.0.1", port=port).ping())
    except redis.ConnectionError:
        return False


def test_a_broker_restarted_empty_mid_run_loses_no_case(
    tmp_path: Path, private_redis: PrivateRedis
) -> None:
    config = write_project(tmp_path / "project", n_cases=N_CASES, sleep_ms=SLEEP_MS, concurrency=1)
    broker = redis_url(private_redis.port, 0)
    with platform(tmp_path, broker_url=broker, chunk_size=CHUNK) as running:
        running.migrate_server_database()
        running.worker(concurrency=2)
        run_id = running.submit(config)
        counts = mid_run(running, run_id)
        assert counts["pending"] >= 1  # their messages wait in the broker

        private_redis.stop()  # the queued messages are gone with it
        time.sleep(0.5)
        private_redis.start()

        assert_every_case_recorded_once(running, run_id)
