"""docker-compose.yml and the Dockerfile against what the code reads and runs.

No Docker engine is needed: the files are parsed, and each thing they name is looked up
where the code defines it. Every variable the services are given is one some code reads
(the table the settings' helpers check, `evalsite._env.VARIABLES`); every variable the
web and the workers need in production is given to them; every command they run parses
with the command's own parser; the services they depend on, the ports and the volumes
are named alike everywhere. Renaming a setting, a flag or a service without the other
side fails here.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.conf import settings
from django.core.management import get_commands

from evalsite._env import SETTINGS, VARIABLES, parse_database_url
from oloproof.cli import build_parser
from oloproof.cli._worker import worker_argv
from oloproof_core.models import DEFAULT, ROLES

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
SERVICES: dict[str, Any] = COMPOSE["services"]
APP_SERVICES = ("web", "worker")
DOCKERFILE = (ROOT / "Dockerfile").read_text(encoding="utf-8")
ENV_FILE_TEMPLATE = ".env.example"
"""What `.env`, the app services' env_file, is made from (docs/deploy.md)."""
INTERPRETER_VARIABLES = {"PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PIP_NO_CACHE_DIR"}
"""Read by Python and pip themselves, set by the Dockerfile for the image's build and run."""
MODEL_VARIABLE = re.compile(r"OLOPROOF_([A-Z]+)_([A-Z_]+)")


def env_file_values(name: str) -> dict[str, str]:
    assert name == ".env", f"an app service reads {name}; this test knows .env only"
    values = {}
    for line in (ROOT / ENV_FILE_TEMPLATE).read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if "=" in line:
            key, value = line.split("=", 1)
            values[key.strip()] = value.strip()
    return values


def service_environment(name: str) -> dict[str, str]:
    """What a service's containers get: its env_file(s), then its own `environment`."""
    service = SERVICES[name]
    files = service.get("env_file", [])
    values: dict[str, str] = {}
    for file in [files] if isinstance(files, str) else files:
        values.update(env_file_values(file if isinstance(file, str) else file["path"]))
    own = service.get("environment", {})
    if isinstance(own, list):
        own = dict(item.split("=", 1) if "=" in item else (item, "") for item in own)
    values.update({key: str(value) for key, value in own.items()})
    return values


def dockerfile_env() -> dict[str, str]:
    values = {}
    for block in re.findall(r"^ENV ((?:.*\\\n)*.*)$", DOCKERFILE, flags=re.MULTILINE):
        for pair in shlex.split(block.replace("\\\n", " ")):
            key, value = pair.split("=", 1)
            values[key] = value
    return values


def compose_interpolated() -> set[str]:
    """Variables the compose file itself substitutes, `${NAME...}` or `$${NAME...}`."""
    text = (ROOT / "docker-compose.yml").read_text(encoding="utf-8")
    return set(re.findall(r"\$\{([A-Z_][A-Z0-9_]*)", text))


def settings_reads() -> set[str]:
    """Every name the settings pass to an `env_*` helper, read from their source."""
    tree = ast.parse((ROOT / SETTINGS).read_text(encoding="utf-8"))
    return {
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id.startswith("env_")
        and node.args
        and isinstance(node.args[0], ast.Constant)
    }


MODEL_PROBE = """
import dataclasses, json, os, sys
from oloproof_core.models import ModelError, settings_for

def resolved(role):
    try:
        return dataclasses.asdict(settings_for(role))
    except ModelError:
        return None

read = []
for name, layer, role in json.loads(sys.argv[1]):
    for key in [key for key in os.environ if key.startswith("OLOPROOF_")]:
        del os.environ[key]
    if not name.endswith("_MODEL"):
        os.environ[f"OLOPROOF_{layer}_MODEL"] = "probe-model"
    before = resolved(role)
    os.environ[name] = "http://probe.invalid/v1" if name.endswith("_URL") else "7"
    if resolved(role) != before:
        read.append(name)
print(json.dumps(read))
"""


def model_variables_read(names: list[str]) -> set[str]:
    """Those of `names` that change the settings the models' code resolves, when set.

    In a process of its own, so no model configured by another test stands in the way.
    """
    probes = []
    for name in names:
        match = MODEL_VARIABLE.fullmatch(name)
        if match and match[1].lower() in (*ROLES, DEFAULT):
            role = "system" if match[1].lower() == DEFAULT else match[1].lower()
            probes.append((name, match[1], role))
    if not probes:
        return set()
    done = subprocess.run(
        [sys.executable, "-c", MODEL_PROBE, json.dumps(probes)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout))


def container_argv(command: list[str] | str, environment: dict[str, str]) -> list[str]:
    """A service's command as its container runs it: `sh -c` scripts expanded and split."""
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    if argv[:2] != ["sh", "-c"]:
        return argv
    # `$$` is compose's escape for a `$` left to the container's shell.
    script = argv[2].replace("$$", "$")

    def expand(match: re.Match[str]) -> str:
        return environment.get(match[1]) or match[2]

    script = re.sub(r"\$\{([A-Z_][A-Z0-9_]*):-([^}]*)\}", expand, script)
    words = shlex.split(script)
    return words[1:] if words[0] == "exec" else words


def test_the_table_is_what_the_settings_read() -> None:
    declared = {name for name, variable in VARIABLES.items() if variable.reader == SETTINGS}
    assert settings_reads() == declared


@pytest.mark.parametrize(
    "variable", [v for v in VARIABLES.values() if v.reader != SETTINGS], ids=lambda v: v.name
)
def test_variables_read_elsewhere_are_read_where_the_table_says(variable: Any) -> None:
    source = (ROOT / variable.reader).read_text(encoding="utf-8")
    assert f'"{variable.name}"' in source, f"{variable.reader} no longer reads {variable.name}"


def test_every_variable_the_services_set_is_read_by_the_code() -> None:
    given = {**dockerfile_env()}
    for name in APP_SERVICES:
        given.update(service_environment(name))
    unread = []
    for name in sorted(given):
        base = name.removesuffix("_FILE")
        if name in VARIABLES or (name != base and base in VARIABLES and VARIABLES[base].file_form):
            continue
        if name not in compose_interpolated() | INTERPRETER_VARIABLES:
            unread.append(name)
    unread = sorted(set(unread) - model_variables_read(unread))
    assert not unread, f"set for the services but read by no code: {unread}"


def test_the_compose_files_own_variables_are_given_a_value() -> None:
    given = env_file_values(".env")
    text = (ROOT / "docker-compose.yml").read_text(encoding="utf-8")
    defaulted = set(re.findall(r"\$\{([A-Z_][A-Z0-9_]*):-", text))
    assert compose_interpolated() - defaulted <= set(given)


@pytest.mark.parametrize("service", APP_SERVICES)
def test_what_production_needs_is_set_for_web_and_worker(service: str) -> None:
    environment = {**dockerfile_env(), **service_environment(service)}
    missing = [
        variable.name
        for variable in VARIABLES.values()
        if service in variable.needed_by
        and not environment.get(variable.name)
        and not (variable.file_form and environment.get(f"{variable.name}_FILE"))
    ]
    assert not missing, f"{service} needs {missing} in production"
    assert environment["DJANGO_DEBUG"] == "0"


def test_the_commands_parse_with_the_commands_own_parsers() -> None:
    parser = build_parser()
    cmd = json.loads(re.search(r"^CMD (.+)$", DOCKERFILE, flags=re.MULTILINE)[1])
    commands = {
        **{name: (SERVICES[name]["command"], service_environment(name)) for name in APP_SERVICES},
        "the Dockerfile's CMD": (cmd, dockerfile_env()),
    }
    parsed = {}
    for name, (command, environment) in commands.items():
        argv = container_argv(command, environment)
        assert argv[0] == "oloproof", name
        try:
            parsed[name] = parser.parse_args(argv[1:])
        except SystemExit:
            pytest.fail(f"{name}: `{shlex.join(argv)}` does not parse with oloproof's parser")
    concurrency = env_file_values(".env")["OLOPROOF_WORKER_CONCURRENCY"]
    assert parsed["worker"].concurrency == int(concurrency)
    assert parsed["web"].worker is False  # the workers are a service of their own


def test_manage_py_commands_the_deployment_names_exist() -> None:
    texts = [ROOT / "docker-compose.yml", ROOT / "Dockerfile", ROOT / "docs" / "deploy.md"]
    named = {
        command
        for path in texts
        for command in re.findall(r"manage\.py ([a-z_]+)\b(?!\.)", path.read_text(encoding="utf-8"))
    }
    assert "migrate" in named
    assert named <= set(get_commands()), named - set(get_commands())


def test_the_worker_health_check_pings_the_node_the_worker_names() -> None:
    check = " ".join(SERVICES["worker"]["healthcheck"]["test"])
    app_module = re.search(r"celery -A (\S+) inspect ping", check)[1]
    assert f"{app_module}.app" == settings.OLOPROOF_CELERY_APP
    node = re.search(r"-d (\S+)", check)[1].replace("$$HOSTNAME", "HOST")
    # The worker runs as PID 1 in its container (`exec`), on the container's host name.
    import oloproof.cli._worker as worker_module

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(worker_module.os, "getpid", lambda: 1)
        patched.setattr(worker_module.socket, "gethostname", lambda: "HOST")
        argv = worker_argv(concurrency=None, loglevel="INFO")
    assert f"--hostname={node}" in argv
    assert "exec oloproof" in SERVICES["worker"]["command"][2]


def test_the_web_port_and_health_check_match_the_server() -> None:
    argv = SERVICES["web"]["command"]
    port = build_parser().parse_args(argv[1:]).port
    assert SERVICES["web"]["ports"] == [f"{port}:{port}"]
    assert re.search(rf"^EXPOSE {port}$", DOCKERFILE, flags=re.MULTILINE)
    check = " ".join(SERVICES["web"]["healthcheck"]["test"])
    assert f"'127.0.0.1', {port}" in check
    assert f"'{settings.LOGIN_URL}'" in check


def test_web_and_worker_depend_on_a_healthy_database_and_broker_they_are_pointed_at() -> None:
    for name in APP_SERVICES:
        needs = SERVICES[name]["depends_on"]
        for dependency in ("db", "redis"):
            assert needs[dependency] == {"condition": "service_healthy"}, (name, dependency)
            assert SERVICES[dependency]["healthcheck"]["test"], dependency
    env = env_file_values(".env")
    database = parse_database_url(env["DATABASE_URL"])
    assert (database["HOST"], database["PORT"]) == ("db", 5432)
    assert (database["USER"], database["NAME"]) == (env["POSTGRES_USER"], env["POSTGRES_DB"])
    assert database["PASSWORD"] == env["POSTGRES_PASSWORD"]
    assert "pg_isready -U $${POSTGRES_USER} -d $${POSTGRES_DB}" in str(
        SERVICES["db"]["healthcheck"]["test"]
    )
    assert re.fullmatch(r"redis://redis:6379/\d+", env["CELERY_BROKER_URL"])
    assert "--port" not in SERVICES["redis"].get("command", [])  # so 6379 it is


def test_volumes_are_declared_used_and_mounted_where_the_code_writes() -> None:
    mounts = {
        mount.split(":", 1)[0]: (name, mount.split(":", 1)[1])
        for name, service in SERVICES.items()
        for mount in service.get("volumes", [])
    }
    assert set(mounts) == set(COMPOSE["volumes"])
    image_env = dockerfile_env()
    assert mounts["static"] == ("web", image_env["OLOPROOF_STATIC_ROOT"])
    assert image_env["OLOPROOF_STATIC_ROOT"].startswith(image_env["OLOPROOF_DATA_DIR"] + "/")
    # The unprivileged user owns the data folder the image names.
    assert f"--home-dir {image_env['OLOPROOF_DATA_DIR']}" in DOCKERFILE
    assert f"chown -R oloproof {image_env['OLOPROOF_DATA_DIR']}" in DOCKERFILE
    assert mounts["pgdata"] == ("db", "/var/lib/postgresql/data")
    assert mounts["redisdata"] == ("redis", "/data")


def test_the_image_installs_bubblewrap_and_the_server_extra() -> None:
    installs = re.findall(r"apt-get install [^&]*", DOCKERFILE)
    assert any("bubblewrap" in line.split() for line in installs), installs
    extra = re.search(r'pip install "\.\[(\w+)\]"', DOCKERFILE)[1]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    packages = " ".join(project["project"]["optional-dependencies"][extra])
    assert "psycopg" in packages
    assert "redis" in packages
