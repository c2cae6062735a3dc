"""The waits and words of a worker's start, without processes
(tests/runs/workers/test_worker_start.py starts real ones)."""

from __future__ import annotations

import itertools

import psycopg
import pytest

from runs.workers.dispatch import celery_app
from runs.workers.worker_start import MAX_WAIT_S, broker_problem, failure_reason, waits
from tests.support.platform import free_port


def test_the_waits_double_up_to_a_cap_and_stay_there() -> None:
    assert list(itertools.islice(waits(), 8)) == [1, 2, 4, 8, 16, MAX_WAIT_S, 30, 30]


def test_a_drivers_failure_is_said_in_a_few_words() -> None:
    port = free_port()
    with pytest.raises(psycopg.OperationalError) as refused:
        psycopg.connect(f"postgresql://nobody@127.0.0.1:{port}/none", connect_timeout=5)
    assert failure_reason(refused.value) == "Connection refused"
    assert failure_reason(OSError()) == "OSError"


def test_a_broker_nothing_listens_for_is_named_with_the_reason() -> None:
    port = free_port()
    app = celery_app()
    previous = app.conf.broker_url
    app.conf.broker_url = f"redis://127.0.0.1:{port}/3"
    try:
        said = broker_problem()
    finally:
        app.conf.broker_url = previous
    assert said == (
        f"cannot reach the broker at redis://127.0.0.1:{port}/3 "
        f"(Error 111 connecting to 127.0.0.1:{port}. Connection refused.)"
    )
