"""Real platform processes for the execution tests: a project folder, a database, a broker,
`oloproof serve` and `oloproof worker` subprocesses, and direct reads of the database.

Every process gets the same environment: a private data folder (its SQLite file, or
a fresh PostgreSQL database when DATABASE_URL names a server), the broker URL, and
short stale/sweep intervals so lost work is picked up within seconds.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
STALE_AFTER_S = 2
SWEEP_INTERVAL_S = 1

BOT = """
import time

from oloproof import system


@system(name="queue-bot", version="1")
def answer(case):
    time.sleep(case.get("sleep_ms", 0) / 1000)
    if case.get("broken"):
        raise RuntimeError("backend down")
    return {"label": "refund" if "refund" in case["question"] else "other"}
"""

CHECKS = """
from oloproof.evaluators import evaluator


@evaluator(criterion="short_label", reads=("output",))
def short_label(case):
    return len(case.output["label"]) <= 6
"""


def write_project(
    folder: Path, *, n_cases: int, sleep_ms: int = 0, concurrency: int = 2, system: str = ""
) -> Path:
    """A project folder: bot.py, checks.py, data.jsonl and oloproof.yaml; returns the config."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.py").write_text(BOT, encoding="utf-8")
    (folder / "checks.py").write_text(CHECKS, encoding="utf-8")
    with (folder / "data.jsonl").open("w", encoding="utf-8") as handle:
        for i in range(n_cases):
            label = "refund" if i % 2 == 0 else "other"
            question = f"{'refund' if label == 'refund' else 'parcel'} #{i}"
            row = {
                "id": f"case_{i:05d}",
                "input": {"question": question, "sleep_ms": sleep_ms, "broken": i % 17 == 5},
                "expected": {"label": label if i % 10 else "wrong"},
            }
            handle.write(json.dumps(row) + "\n")
    config = folder / "oloproof.yaml"
    config.write_text(
        textwrap.dedent(
            f"""\
            system: {system or "bot.py:answer"}
            dataset: data.jsonl
            evaluators:
              - ExactMatch: {{criterion: exact_label, field: label}}
              - checks.py:short_label
            concurrency: {concurrency}
            """
        ),
        encoding="utf-8",
    )
    return config


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until(check: Callable[[], Any], *, timeout: float, what: str, every: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(every)


class Database:
    """The database every process of a test shares, read directly with SQL by the test."""

    def __init__(self, data_dir: Path, server_url: str | None) -> None:
        self.data_dir = data_dir
        self.server_url = server_url
        self.url: str | None = None
        if server_url:
            self.name = f"oloproof_exec_{uuid.uuid4().hex[:10]}"
            self._admin(f'CREATE DATABASE "{self.name}"')
            self.url = server_url.rsplit("/", 1)[0] + "/" + self.name

    @property
    def env(self) -> dict[str, str]:
        return {"DATABASE_URL": self.url} if self.url else {}

    def _admin(self, statement: str) -> None:
        import psycopg

        assert self.server_url is not None
        # The server's maintenance database: the one DATABASE_URL names may not exist.
        maintenance = self.server_url.rsplit("/", 1)[0] + "/postgres"
        with psycopg.connect(maintenance, autocommit=True) as connection:
            connection.execute(statement)

    def drop(self) -> None:
        if self.url:
            self._admin(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        if self.url:
            import psycopg

            with psycopg.connect(self.url) as connection:
                return list(connection.execute(sql.replace("?", "%s"), params).fetchall())
        path = self.data_dir / "oloproof.sqlite3"
        with sqlite3.connect(path, timeout=30) as connection:
            return list(connection.execute(sql, params).fetchall())

    def value(self, sql: str, params: Sequence[Any] = ()) -> Any:
        rows = self.rows(sql, params)
        return rows[0][0] if rows else None

    def run(self, run_id: int) -> dict[str, Any]:
        columns = ("status", "cases_done", "cases_total", "cases_failed", "error")
        found = self.rows(f"SELECT {', '.join(columns)} FROM runs_run WHERE id = ?", [run_id])
        return dict(zip(columns, found[0], strict=True)) if found else {}

    def chunk_counts(self, run_id: int) -> dict[str, int]:
        found = self.rows(
            "SELECT status, COUNT(*) FROM runs_runchunk WHERE run_id = ? GROUP BY status", [run_id]
        )
        return dict(found)

    def case_ids(self, run_id: int) -> list[str]:
        found = self.rows("SELECT case_id FROM runs_caseresult WHERE run_id = ?", [run_id])
        return [case_id for (case_id,) in found]


class Platform:
    """Starts and stops the processes of one test; everything it starts it also ends."""

    def __init__(
        self,
        root: Path,
        *,
        broker_url: str,
        server_url: str | None,
        chunk_size: int,
        stale_after_s: int = STALE_AFTER_S,
    ) -> None:
        self.root = root
        self.chunk_size = chunk_size
        self.stale_after_s = stale_after_s
        self.data_dir = root / "data"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.database = Database(self.data_dir, server_url)
        self.broker_url = broker_url
        self.processes: list[subprocess.Popen[bytes]] = []
        self.logs = root / "logs"
        self.logs.mkdir(exist_ok=True)

    @property
    def env(self) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if key not in ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE")
        }
        env.update(
            OLOPROOF_DATA_DIR=str(self.data_dir),
            CELERY_BROKER_URL=self.broker_url,
            OLOPROOF_CHUNK_SIZE=str(self.chunk_size),
            OLOPROOF_CHUNK_STALE_AFTER=str(self.stale_after_s),
            OLOPROOF_SWEEP_INTERVAL=str(SWEEP_INTERVAL_S),
            OLOPROOF_LOG_LEVEL="WARNING",
            PYTHONPATH=str(REPO),
            **self.database.env,
        )
        return env

    def start(
        self, args: Sequence[str], *, name: str, extra_env: Mapping[str, str] = ()
    ) -> subprocess.Popen[bytes]:
        log = (self.logs / f"{name}.log").open("ab")
        process = subprocess.Popen(
            [PYTHON, "-m", "oloproof", *args],
            cwd=self.root,
            env={**self.env, **dict(extra_env)},
            stdout=log,
            stderr=subprocess.STDOUT,
            # Its own process group, so a kill reaches the worker's pool children too.
            start_new_session=True,
        )
        self.processes.append(process)
        return process

    def call(
        self, args: Sequence[str], *, timeout: float = 120, extra_env: Mapping[str, str] = ()
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [PYTHON, "-m", "oloproof", *args],
            cwd=self.root,
            env={**self.env, **dict(extra_env)},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def python(self, code: str, *, timeout: float = 120) -> str:
        """Run Django code in a fresh process of this platform; returns its stdout."""
        prelude = "import django, os\nos.environ['DJANGO_SETTINGS_MODULE'] = 'evalsite.settings'\n"
        done = subprocess.run(
            [PYTHON, "-c", prelude + "django.setup()\n" + textwrap.dedent(code)],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def migrate_server_database(self) -> None:
        """Migrate a PostgreSQL test database; the embedded SQLite file migrates itself."""
        if self.database.url:
            self.python(
                "from django.core.management import call_command\n"
                "call_command('migrate', interactive=False, verbosity=0)\n"
            )

    def submit(self, config: Path) -> int:
        done = self.call(["run", str(config), "--submit"])
        assert done.returncode == 0, done.stderr
        return int(done.stdout.split()[0])

    def worker(
        self, *, concurrency: int = 2, name: str = "worker", extra_env: Mapping[str, str] = ()
    ) -> subprocess.Popen[bytes]:
        return self.start(
            ["worker", f"--concurrency={concurrency}", "--loglevel=WARNING"],
            name=name,
            extra_env=extra_env,
        )

    def kill(self, process: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
        """Signal the process's whole group; SIGKILL it if it has not ended in 30 s."""
        try:
            os.killpg(process.pid, sig)
            process.wait(timeout=30)
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    def stop_all(self) -> None:
        try:
            for process in reversed(self.processes):
                if process.poll() is None:
                    self.kill(process, signal.SIGTERM)
        finally:
            # Pool processes left by a group leader that died first.
            for process in self.processes:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
            self.database.drop()

    def log_text(self) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text(errors='replace')[-4000:]}"
            for path in sorted(self.logs.glob("*.log"))
        )

    def wait_for_run(self, run_id: int, *, timeout: float = 60) -> dict[str, Any]:
        def finished() -> dict[str, Any] | None:
            run = self.database.run(run_id)
            return run if run.get("status") in ("succeeded", "failed") else None

        try:
            return dict(wait_until(finished, timeout=timeout, what=f"run {run_id} to finish"))
        except AssertionError:
            raise AssertionError(
                f"run {run_id} did not finish: {self.database.run(run_id)}, chunks "
                f"{self.database.chunk_counts(run_id)}\n{self.log_text()}"
            ) from None


@contextmanager
def platform(
    root: Path, *, broker_url: str, chunk_size: int = 500, stale_after_s: int = STALE_AFTER_S
) -> Iterator[Platform]:
    running = Platform(
        root,
        broker_url=broker_url,
        server_url=os.environ.get("DATABASE_URL"),
        chunk_size=chunk_size,
        stale_after_s=stale_after_s,
    )
    try:
        yield running
    finally:
        running.stop_all()


class Api:
    """A token-authenticated client of a served site's REST API."""

    def __init__(self, base_url: str, token: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base_url + path,
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def get(self, path: str) -> Any:
        status, body = self.request("GET", path)
        assert status == 200, (status, body)
        return body


def redis_url(port: int, db: int) -> str:
    return f"redis://127.0.0.1:{port}/{db}"


def redis_flush(port: int, db: int) -> None:
    import redis

    redis.Redis(host="127.0.0.1", port=port, db=db).flushdb()


def server_ready(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False
