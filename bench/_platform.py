"""Setting up the platform for the benchmarks that run real workers: a fresh PostgreSQL
database, an empty Redis database, Django configured and migrated in this process."""

from __future__ import annotations

import os


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
