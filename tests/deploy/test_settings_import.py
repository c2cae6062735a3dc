"""Importing the settings changes nothing on disk; starting Django prepares the data folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _python(code: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "DATABASE_URL", "CELERY_", "OLOPROOF_"))
    }
    env.update(OLOPROOF_DATA_DIR=str(data_dir), DJANGO_SETTINGS_MODULE="evalsite.settings")
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_importing_the_settings_creates_no_folder_and_no_secret(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    done = _python("import evalsite.settings as s; print(s.SECRET_KEY != '')", data_dir)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"
    assert not data_dir.exists()


def test_starting_django_prepares_the_folder_and_keeps_one_secret(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    code = (
        "import django; django.setup(); "
        "from django.conf import settings; print(settings.SECRET_KEY)"
    )
    first = _python(code, data_dir)
    second = _python(code, data_dir)
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    assert (data_dir / "broker" / "queue").is_dir()
    assert (data_dir / "static").is_dir()
    kept = (data_dir / "secret_key").read_text(encoding="utf-8").strip()
    assert first.stdout.strip() == second.stdout.strip() == kept
