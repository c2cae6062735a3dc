"""`oloproof project`: make projects, give members roles, register code roots."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def oloproof(*args: str, data: Path) -> subprocess.CompletedProcess[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "DATABASE_URL", "CELERY_", "OLOPROOF_"))
    }
    env["OLOPROOF_DATA_DIR"] = str(data)
    return subprocess.run(
        [sys.executable, "-m", "oloproof", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_a_project_gets_members_and_code_roots(tmp_path: Path) -> None:
    data = tmp_path / "store"
    code = tmp_path / "evals"
    code.mkdir()
    assert oloproof("project", "create", "support", data=data).returncode == 0
    made = oloproof("user", "create", "ada", "--viewer", data=data)
    assert made.returncode == 0, made.stderr
    member = oloproof("project", "member", "support", "ada", "approver", data=data)
    assert member.returncode == 0, member.stderr
    root = oloproof("project", "root", "support", str(code), data=data)
    assert root.returncode == 0, root.stderr
    listed = oloproof("project", "list", data=data)
    assert listed.returncode == 0, listed.stderr
    assert "support" in listed.stdout
    assert "member  ada: approver" in listed.stdout
    assert f"code    {os.path.realpath(code)}" in listed.stdout


def test_unknown_projects_and_accounts_are_clear_errors(tmp_path: Path) -> None:
    data = tmp_path / "store"
    missing = oloproof("project", "root", "nowhere", str(tmp_path), data=data)
    assert missing.returncode == 3
    assert "no project 'nowhere'" in missing.stderr
    assert "Traceback" not in missing.stderr
    assert oloproof("project", "create", "support", data=data).returncode == 0
    nobody = oloproof("project", "member", "support", "ghost", "viewer", data=data)
    assert nobody.returncode == 3
    assert "no account 'ghost'" in nobody.stderr
