"""Accounts: `oloproof user create`, the first login `serve` makes, and the login page."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.faces.conftest import clean_env, oloproof, python


def test_user_create_makes_an_approver_and_prints_its_login_once(project: Path) -> None:
    done = oloproof("user", "create", "ada", "--approver", cwd=project)
    assert done.returncode == 0, done.stderr
    name, password = done.stdout.split()[1], done.stdout.split()[3]
    assert name == "ada"
    assert "made approver 'ada' in" in done.stderr
    assert str(project / ".oloproof") in done.stderr
    again = oloproof("user", "create", "ada", cwd=project)
    assert again.returncode == 3
    assert "an account named 'ada' already exists" in again.stderr
    chosen = oloproof("user", "create", "bo", "--password-stdin", cwd=project, stdin="short\n")
    assert chosen.returncode == 3
    assert "password refused" in chosen.stderr
    viewer = oloproof(
        "user",
        "create",
        "cy",
        "--viewer",
        "--password-stdin",
        cwd=project,
        stdin="a-long-enough-passphrase\n",
    )
    assert viewer.returncode == 0, viewer.stderr
    assert viewer.stdout == ""  # a chosen password is not echoed
    rights = python(
        f"""
        from oloproof._platform import django_setup
        django_setup()
        from django.contrib.auth.models import User
        from runs.models import Membership
        ada = User.objects.get(username="ada")
        cy = User.objects.get(username="cy")
        print(ada.check_password({password!r}), cy.check_password("a-long-enough-passphrase"))
        print(*(Membership.objects.get(user=user, project__slug="default").role
                for user in (ada, cy)))
        """,
        cwd=project,
    )
    assert rights.split() == ["True", "True", "approver", "viewer"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _serve_banner(project: Path) -> str:
    """Start `oloproof serve`, read what it prints up to 'Ctrl-C', then stop it."""
    process = subprocess.Popen(
        [sys.executable, "-m", "oloproof", "serve", f"--port={_free_port()}", "--no-worker"],
        cwd=project,
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    deadline = time.monotonic() + 90
    try:
        assert process.stdout is not None
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            lines.append(line)
            if "Ctrl-C" in line or not line:
                break
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    return "".join(lines)


def test_serve_on_a_store_without_accounts_makes_the_first_one_once(project: Path) -> None:
    first = _serve_banner(project)
    assert "dashboard   http://127.0.0.1:" in first
    assert "login       admin / " in first, first
    assert "oloproof user create NAME" in first
    assert "Warning" not in first
    second = _serve_banner(project)
    assert "login" not in second
    assert "dashboard" in second


@pytest.mark.django_db
def test_the_login_page_says_where_accounts_come_from(client) -> None:
    page = client.get("/accounts/login/").content.decode()
    assert "oloproof user create NAME --approver" in page
    assert "prints its password once" in page
