"""Setting up the platform for the benchmarks that run real workers: a fresh PostgreSQL
database, an empty Redis database, Django configured and migrated in this process; and
serving a data folder's dashboard with `oloproof serve`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path


def fresh_database(server_url: str, name: str) -> str:
    """Drop and create database `name` on the server; returns its URL."""
    import psycopg

    server = server_url.rstrip("/")
    with psycopg.connect(server + "/postgres", autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    return f"{server}/{name}"


def drop_database(server_url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(server_url.rstrip("/") + "/postgres", autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def django_on(env: dict[str, str], redis_url: str) -> None:
    """Make `env` this process's environment, empty the broker's database, migrate."""
    os.environ.update(env)
    import django
    import redis
    from django.core.management import call_command

    redis.Redis.from_url(redis_url).flushdb()
    django.setup()
    call_command("migrate", interactive=False, verbosity=0)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def serve_dashboard(env: dict[str, str], folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`oloproof serve --no-worker` in `folder`, once it answers: the process and its URL."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "oloproof", "serve", "--no-worker", f"--port={port}"],
        cwd=folder,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return process, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("oloproof serve did not answer within 120 s")
