"""A chunk's heartbeat that loses its database says so in one line, keeps the claim and
keeps trying, less often, until the database answers, and says that too. In one process
with the database's answers stood in for (tests/runs/workers/test_worker_start.py cuts a real
worker's PostgreSQL)."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator

import pytest
from django.db import OperationalError

from runs.models import RunChunk
from runs.workers import chunks
from runs.workers.worker_start import waits
from tests.support.platform import wait_until

REFUSED = (
    'connection failed: connection to server at "127.0.0.1", port 1 failed: Connection refused'
)


class Database:
    """Stands for the heartbeat's UPDATE: refused while `down`, else whether the claim holds."""

    def __init__(self) -> None:
        self.down = threading.Event()
        self.claim_holds = True
        self.tries = 0

    def beat(self, chunk_id: int, token: str, cases_done: int) -> bool:
        self.tries += 1
        if self.down.is_set():
            raise OperationalError(REFUSED)
        return self.claim_holds


@pytest.fixture
def database(settings, monkeypatch: pytest.MonkeyPatch) -> Database:
    settings.OLOPROOF_CHUNK_STALE_AFTER = 1  # a beat at least every 0.25 s
    monkeypatch.setattr(chunks, "PROGRESS_EVERY_S", 0.02)
    standing_in = Database()
    monkeypatch.setattr(chunks, "_chunk_beat", standing_in.beat)
    return standing_in


def heartbeat() -> chunks._Heartbeat:
    return chunks._Heartbeat(RunChunk(pk=7, index=2, run_id=3), "worker:token")


def test_a_heartbeat_that_loses_the_database_says_so_once_keeps_trying_and_says_when_it_is_back(
    database: Database, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[float] = []

    def recorded_waits(first: float, longest: float) -> Iterator[float]:
        for wait in waits(first, longest):
            asked.append(wait)
            yield wait

    monkeypatch.setattr(chunks, "waits", recorded_waits)
    caplog.set_level(logging.WARNING, logger="runs.workers.chunks")
    database.down.set()
    with heartbeat() as beating:
        beating.progress("system", 1, 3)
        wait_until(lambda: database.tries >= 6, timeout=30, what="six tries")
        database.down.clear()
        wait_until(lambda: "answers again" in caplog.text, timeout=30, what="the database back")

    said = [record.getMessage() for record in caplog.records]
    assert said[0] == (
        "heartbeat of chunk 2 of run 3: lost the database (Connection refused); the chunk "
        "stays claimed and the heartbeat keeps trying, at most 0.25 s apart"
    )
    assert re.fullmatch(
        r"heartbeat of chunk 2 of run 3: the database answers again, after \d+\.\d s", said[1]
    )
    assert len(said) == 2  # not a line, nor a traceback, per failed beat
    assert not any(record.exc_info for record in caplog.records)
    # Waits between tries double, up to the interval the claim needs a beat within.
    assert asked[:5] == pytest.approx([0.02, 0.04, 0.08, 0.16, 0.25])


def test_a_heartbeat_whose_chunk_was_taken_while_it_was_stale_says_so_and_stops(
    database: Database, caplog: pytest.LogCaptureFixture
) -> None:
    database.claim_holds = False
    caplog.set_level(logging.WARNING, logger="runs.workers.chunks")
    with heartbeat() as beating:
        beating.progress("system", 1, 3)
        wait_until(lambda: caplog.records, timeout=30, what="the heartbeat to say why it stops")
        beating.progress("system", 2, 3)
    assert [record.getMessage() for record in caplog.records] == [
        "heartbeat of chunk 2 of run 3: the chunk was taken from this worker while its "
        "heartbeat was stale; this worker will record none of its cases"
    ]
    assert database.tries == 1
