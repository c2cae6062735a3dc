"""The local store in a process of its own, beside the run; cases recorded as they go.

A run from a process that has not set Django up (the command, a user's script) talks to
the project's store through `oloproof._store_process`: the run's own process never
imports Django, the command records its cases batch by batch, and a run whose process
is killed is marked failed by the store's process rather than left running.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from oloproof_core.evaluation.recording_as_it_goes import BATCH, batch_bounds
from tests.faces.conftest import clean_env, oloproof, python, write_project


def store_rows(project: Path, sql: str) -> list[tuple[Any, ...]]:
    connection = sqlite3.connect(project / ".oloproof" / "oloproof.sqlite3")
    try:
        return connection.execute(sql).fetchall()
    finally:
        connection.close()


def test_the_command_records_every_batch_and_its_process_never_loads_django(
    tmp_path: Path,
) -> None:
    project = tmp_path / "big"
    write_project(project, n=2 * BATCH + 150)
    done = oloproof("run", "oloproof.yaml", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "recorded run #1 →" in done.stderr
    assert "exact_label" in done.stdout
    [(status, total, finished, failed)] = store_rows(
        project, "SELECT status, cases_total, cases_done, cases_failed FROM runs_run"
    )
    assert (status, total, finished, failed) == ("succeeded", 2 * BATCH + 150, 2 * BATCH + 150, 0)
    assert store_rows(project, "SELECT count(*) FROM runs_caseresult") == [(2 * BATCH + 150,)]
    assert store_rows(project, "SELECT count(*) FROM runs_datasetcase") == [(2 * BATCH + 150,)]
    assert store_rows(project, "SELECT count(*) FROM metrics_caseverdict") == [(2 * BATCH + 150,)]

    # The same run from a script: recorded in the same store, Django never imported here.
    shown = python(
        """
        import json, sys
        from oloproof import evaluate
        from oloproof.evaluators import ExactMatch
        from bot import answer
        result = evaluate(answer, "data/cases.jsonl", [ExactMatch(criterion="e", field="label")])
        print(json.dumps([result.run_id, "django" in sys.modules, result.cases[3].output]))
        """,
        cwd=project,
    )
    assert json.loads(shown) == ["2", False, {"label": "refund"}]


HANGING_BOT = """
import time
from oloproof import system


@system(name="bot", version="1")
def answer(case):
    if case["q"].endswith("#{hang}"):
        time.sleep(600)
    return {{"label": "refund" if "refund" in case["q"] else "other"}}
"""


def first_batch_recorded(project: Path) -> bool:
    if not (project / ".oloproof" / "oloproof.sqlite3").exists():
        return False
    (_, first_end), _ = batch_bounds(2 * BATCH + 150)[:2]
    try:
        return bool(store_rows(project, f"SELECT 1 FROM runs_run WHERE cases_done = {first_end}"))
    except sqlite3.OperationalError:  # the store is still being made
        return False


def _hear_ctrl_c() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def hanging_command(project: Path) -> subprocess.Popen[bytes]:
    """`oloproof run` in its own session (as from a terminal), its second batch hanging."""
    write_project(project, n=2 * BATCH + 150)
    _, (second_start, _) = batch_bounds(2 * BATCH + 150)[:2]
    (project / "bot.py").write_text(HANGING_BOT.format(hang=second_start + 100), encoding="utf-8")
    command = subprocess.Popen(
        [sys.executable, "-m", "oloproof", "run", "oloproof.yaml"],
        cwd=project,
        env=clean_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        # Ctrl-C as a terminal's foreground job has it, whatever this process was given.
        preexec_fn=_hear_ctrl_c,
    )
    deadline = time.monotonic() + 120
    while not first_batch_recorded(project):
        if time.monotonic() > deadline or command.poll() is not None:
            command.kill()
            raise AssertionError("the first batch was never recorded")
        time.sleep(0.2)
    return command


def run_status_once_settled(project: Path) -> tuple[str, str]:
    deadline = time.monotonic() + 60
    while True:
        [(status, error)] = store_rows(project, "SELECT status, error FROM runs_run")
        if status != "running" or time.monotonic() > deadline:
            return status, error
        time.sleep(0.2)


def test_a_killed_command_leaves_its_run_failed_not_running(tmp_path: Path) -> None:
    project = tmp_path / "killed"
    command = hanging_command(project)
    try:
        command.send_signal(signal.SIGKILL)
        command.wait(timeout=30)
        status, error = run_status_once_settled(project)
    finally:
        command.kill()
    assert status == "failed"
    assert "ended before the run finished" in error


def test_ctrl_c_stops_the_command_and_its_run_is_failed_on_record(tmp_path: Path) -> None:
    project = tmp_path / "interrupted"
    command = hanging_command(project)
    try:
        os.killpg(command.pid, signal.SIGINT)  # what a terminal sends the whole group
        _, stderr = command.communicate(timeout=60)
    finally:
        command.kill()
    assert command.returncode == 130
    assert "oloproof: interrupted" in stderr.decode()
    assert "Traceback" not in stderr.decode()
    status, error = run_status_once_settled(project)
    assert status == "failed"
    assert "KeyboardInterrupt" in error


_TGKILL = {"x86_64": 234, "aarch64": 131}.get(os.uname().machine)


@pytest.mark.skipif(_TGKILL is None, reason="tgkill's number is known for x86_64 and aarch64")
def test_ctrl_c_that_reaches_another_thread_still_stops_the_command(tmp_path: Path) -> None:
    """The kernel may hand a process's SIGINT to any of its threads; the main thread,
    waiting on a case that sleeps for minutes, must still notice it."""
    project = tmp_path / "threaded"
    command = hanging_command(project)
    try:
        others = [int(tid) for tid in os.listdir(f"/proc/{command.pid}/task")]
        others.remove(command.pid)
        assert others, "the command runs threads beside its main one"
        libc = ctypes.CDLL(None, use_errno=True)
        assert libc.syscall(_TGKILL, command.pid, others[0], signal.SIGINT) == 0
        _, stderr = command.communicate(timeout=30)
    finally:
        command.kill()
    assert command.returncode == 130
    assert "oloproof: interrupted" in stderr.decode()


def test_the_store_process_sets_up_only_the_recording_apps_and_the_dashboard_adds_the_rest(
    tmp_path: Path,
) -> None:
    """Its settings leave out the admin, sessions and sign-in apps (a smaller set-up on
    every recorded run); the next process with the full settings migrates them."""
    project = tmp_path / "fresh"
    write_project(project, n=20)
    done = oloproof("run", "oloproof.yaml", cwd=project)
    assert done.returncode == 0, done.stderr
    migrated = {app for (app,) in store_rows(project, "SELECT DISTINCT app FROM django_migrations")}
    assert migrated == {"auth", "contenttypes", "runs", "metrics"}

    shown = python(
        """
        import os, django
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
        django.setup()
        from axes.models import AccessAttempt
        from django.contrib.admin.models import LogEntry
        from django.contrib.sessions.models import Session
        from runs.store.database import database_ready, migrations_applied, migrations_on_disk
        from runs.models import Run
        database_ready()
        print(migrations_on_disk() <= migrations_applied(), Run.objects.count(),
              Session.objects.count(), AccessAttempt.objects.count(), LogEntry.objects.count())
        """,
        cwd=project,
    )
    assert shown.split() == ["True", "1", "0", "0", "0"]


def test_a_message_larger_than_a_pipe_holds_is_sent_without_waiting_for_the_reader() -> None:
    """The run hands the store a batch and goes on: the store reads it only once it has
    written the batch before, and a batch is more than a pipe holds."""
    from oloproof._store_process import PipeWriter, encode, receive

    read_fd, write_fd = os.pipe()
    writer = PipeWriter(write_fd)
    try:
        batches = [("run_cases_add", (f"batch {n}", "x" * 300_000)) for n in range(3)]
        sending = threading.Thread(target=lambda: [writer.write(encode(b)) for b in batches])
        sending.start()
        sending.join(30)  # nobody reads yet
        assert not sending.is_alive(), "writing waited for the reader"
        assert [receive(read_fd) for _ in batches] == batches  # whole, and in order
        writer.finish(5)
    finally:
        os.close(read_fd)
        os.close(write_fd)


def test_a_writer_whose_reader_has_gone_says_it_is_broken() -> None:
    from oloproof._store_process import PipeWriter, encode

    read_fd, write_fd = os.pipe()
    os.close(read_fd)
    writer = PipeWriter(write_fd)
    try:
        writer.write(encode(("run_cases_add", ("batch",))))
        writer.finish(5)
        assert writer.broken
    finally:
        os.close(write_fd)


def test_a_run_sends_only_so_many_calls_ahead_of_its_store(tmp_path: Path) -> None:
    """A run whose verdicts all come from its own memory makes no call that reads the
    answers of the batches it sends ahead: past a few, it waits for the oldest, so the
    answers' pipe never fills and the batches waiting in memory stay few."""
    project = tmp_path / "ahead"
    write_project(project, n=60)
    shown = python(
        """
        import json
        from datetime import UTC, datetime
        from oloproof._store_process import MOST_AHEAD, StoreProcess
        from oloproof_core import CaseResult, load_dataset, plan_run
        from oloproof_core.evaluation.conclusion import run_opening
        from oloproof_core.judging.evaluators import ExactMatch
        from oloproof_core.cases.verdict import Verdict
        from bot import answer

        check = ExactMatch(criterion="e", field="label")
        plan = plan_run(system=answer, evaluators=[check])
        data = load_dataset("data/cases.jsonl")
        store = StoreProcess()
        name = store.run_open(run_opening(plan, data, datetime.now(UTC)))
        most = 0
        for position, row in enumerate(data.rows):
            case = CaseResult.from_row(row)
            case.output = {"label": "other"}
            case.verdicts["e"] = Verdict(value=1.0)
            store.run_cases_add(name, [case], position)
            most = max(most, store._unanswered)
        store.run_abandon(name, "the test is done")
        store.close()
        print(json.dumps([most, MOST_AHEAD]))
        """,
        cwd=project,
    )
    most, limit = json.loads(shown)
    assert most == limit
    [(status, done)] = store_rows(project, "SELECT status, cases_done FROM runs_run")
    assert (status, done) == ("failed", 60)
