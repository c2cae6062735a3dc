"""docker-compose.yml, the Dockerfile and .env.example agree with what the settings need.

There is no Docker engine on the machines that run these tests, so the files are
checked by reading them: services, commands, environment and health checks.
"""

from __future__ import annotations

import os
import re
import secrets
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from oloproof.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]


def example_env() -> dict[str, str]:
    values = {}
    for line in (ROOT / ".env.example").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "=" in line:
            name, value = line.split("=", 1)
            values[name.strip()] = value.strip()
    return values


def production_env(**overrides: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "DATABASE_URL", "CELERY_", "OLOPROOF_"))
    }
    env.update(example_env())
    env.update(
        {
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(64),
            # The example's hosts are the compose services; here the same settings point at
            # this machine's servers.
            "DATABASE_URL": "postgresql://postgres@127.0.0.1:5432/postgres",
            "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
        }
    )
    env.update(overrides)
    return env


def django_check(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "check", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_four_services_with_health_checks_and_named_volumes():
    assert set(SERVICES) == {"db", "redis", "web", "worker"}
    for name, service in SERVICES.items():
        assert service["healthcheck"]["test"], name
        assert service["restart"] == "unless-stopped", name
    declared = set(COMPOSE["volumes"])
    used = {
        mount.split(":", 1)[0]
        for service in SERVICES.values()
        for mount in service.get("volumes", [])
    }
    assert used == declared == {"pgdata", "redisdata", "static"}


def test_web_and_worker_wait_for_a_healthy_database_and_broker():
    for name in ("web", "worker"):
        depends = SERVICES[name]["depends_on"]
        assert depends == {
            "db": {"condition": "service_healthy"},
            "redis": {"condition": "service_healthy"},
        }, name
        assert SERVICES[name]["env_file"] == ".env"


def test_commands_are_real_oloproof_commands():
    parser = build_parser()
    web = SERVICES["web"]["command"]
    assert web[0] == "oloproof"
    args = parser.parse_args(web[1:])
    assert (args.host, args.port, args.worker) == ("0.0.0.0", 8000, False)
    worker = shlex.split(SERVICES["worker"]["command"][2].replace("exec ", ""))
    worker = [part.replace("$${OLOPROOF_WORKER_CONCURRENCY:-4}", "4") for part in worker]
    assert parser.parse_args(worker[1:]).concurrency == 4
    assert "8000:8000" in SERVICES["web"]["ports"]


def test_env_example_points_at_the_compose_services_and_covers_the_settings():
    env = example_env()
    assert env["DATABASE_URL"].split("@", 1)[1].startswith("db:5432/")
    assert env["CELERY_BROKER_URL"].startswith("redis://redis:6379/")
    assert env["DJANGO_DEBUG"] == "0"
    settings_text = (ROOT / "evalsite" / "settings.py").read_text()
    read = set(re.findall(r'env_(?:str|bool|int|list|secret)\("([A-Z_]+)"', settings_text))
    production = {
        "DJANGO_SECRET_KEY",
        "DJANGO_DEBUG",
        "DJANGO_ALLOWED_HOSTS",
        "DJANGO_CSRF_TRUSTED_ORIGINS",
        "DJANGO_SECURE_COOKIES",
        "DJANGO_SSL_REDIRECT",
        "DJANGO_HSTS_SECONDS",
        "DJANGO_BEHIND_PROXY",
        "DATABASE_URL",
        "CELERY_BROKER_URL",
    }
    assert production <= read | {"CELERY_BROKER_URL"}
    assert production <= set(env)


def test_dockerfile_copies_what_exists_and_runs_unprivileged():
    dockerfile = (ROOT / "Dockerfile").read_text()
    for source in re.findall(r"^COPY (\S+) ", dockerfile, flags=re.MULTILINE):
        assert (ROOT / source).exists(), source
    for line in re.findall(r"^COPY (.+) \./$", dockerfile, flags=re.MULTILINE):
        for source in line.split():
            assert (ROOT / source).exists(), source
    assert re.search(r"^USER oloproof$", dockerfile, flags=re.MULTILINE)


@pytest.mark.postgres
def test_check_deploy_is_clean_with_the_production_environment():
    checked = django_check("--deploy", "--fail-level", "WARNING", env=production_env())
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "no issues" in checked.stdout


@pytest.mark.postgres
def test_check_deploy_complains_when_production_settings_are_missing():
    checked = django_check(
        "--deploy",
        "--fail-level",
        "WARNING",
        env=production_env(DJANGO_SSL_REDIRECT="0", DJANGO_HSTS_SECONDS="0"),
    )
    assert checked.returncode != 0
    assert "SECURE_SSL_REDIRECT" in checked.stderr + checked.stdout


def test_secrets_can_come_from_files(tmp_path):
    key_file = tmp_path / "key"
    key_file.write_text("k" * 20 + secrets.token_urlsafe(40) + "\n")
    env = production_env(
        DJANGO_SECRET_KEY="", DJANGO_SECRET_KEY_FILE=str(key_file), OLOPROOF_DATA_DIR=str(tmp_path)
    )
    env.pop("DJANGO_SECRET_KEY")
    shown = subprocess.run(
        [
            sys.executable,
            "-c",
            "from django.conf import settings; import django; "
            "django.setup(); print(settings.SECRET_KEY)",
        ],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "evalsite.settings"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.stdout.strip() == key_file.read_text().strip(), shown.stderr
    env["DJANGO_SECRET_KEY_FILE"] = str(tmp_path / "absent")
    failed = django_check(env=env)
    assert failed.returncode != 0
    assert "DJANGO_SECRET_KEY_FILE" in failed.stderr
    assert "cannot be read" in failed.stderr
