"""A chunk whose database fails is retried after waits that grow up to a cap, jittered
and never 0 s, and Celery's retry line shows each one. The task runs eagerly here, its
retries at once; tests/runs/workers/test_worker_start.py cuts a real worker's PostgreSQL."""

from __future__ import annotations

import logging
import re
from itertools import pairwise

import pytest
from django.db import OperationalError

from runs.tasks import CHUNK_RETRIES, chunk_retry_countdown, run_chunk_execute
from runs.workers import chunks

REFUSED = (
    'connection failed: connection to server at "127.0.0.1", port 1 failed: Connection refused'
)


def test_a_chunk_whose_database_fails_is_retried_after_growing_waits_up_to_a_cap(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(*, chunk_id: int) -> str:
        raise OperationalError(REFUSED)

    monkeypatch.setattr(chunks, "chunk_execute", refused)
    caplog.set_level(logging.INFO, logger="celery.app.trace")
    result = run_chunk_execute.apply(args=[7], throw=False)  # retries at once, eagerly
    assert isinstance(result.result, OperationalError)

    # Celery's own line for each retry, with the countdown the retry was sent with.
    countdowns = [float(wait) for wait in re.findall(r"retry: Retry in ([\d.]+)s: ", caplog.text)]
    # Ceilings doubling from 1 s up to 30 s; each countdown drawn in its ceiling's upper half.
    ceilings = [1, 2, 4, 8, 16, 30, 30, 30]
    assert len(countdowns) == CHUNK_RETRIES == len(ceilings)
    for countdown, ceiling in zip(countdowns, ceilings, strict=True):
        assert ceiling / 2 <= countdown <= ceiling
    assert all(later >= earlier for earlier, later in pairwise(countdowns[:5]))


def test_workers_that_lost_the_database_together_retry_spread_out() -> None:
    assert len({chunk_retry_countdown(3) for _ in range(50)}) > 1
