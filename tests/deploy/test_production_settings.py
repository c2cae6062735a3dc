"""Production mode (a database server, no debug): a real secret, HSTS on by default."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = {
    "DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none",
    "DJANGO_DEBUG": "0",
}


def settings_of(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "DATABASE_URL", "CELERY_", "OLOPROOF_"))
    }
    clean.update(OLOPROOF_DATA_DIR=str(tmp_path), **env)
    return subprocess.run(
        [sys.executable, "-c", "import evalsite.settings as s; print(s.SECURE_HSTS_SECONDS)"],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_placeholder_secret_from_env_example_is_refused_in_production(tmp_path: Path) -> None:
    example = (ROOT / ".env.example").read_text(encoding="utf-8")
    placeholder = next(
        line.split("=", 1)[1].split()[0]
        for line in example.splitlines()
        if line.startswith("DJANGO_SECRET_KEY=")
    )
    for weak in (placeholder, "short"):
        refused = settings_of(tmp_path, DJANGO_SECRET_KEY=weak, **PRODUCTION)
        assert refused.returncode != 0
        assert "DJANGO_SECRET_KEY is a placeholder" in refused.stderr
    # The embedded default (no database server) keeps working with any key.
    assert settings_of(tmp_path, DJANGO_SECRET_KEY=placeholder).returncode == 0


def test_hsts_is_on_by_default_in_production_and_can_be_set(tmp_path: Path) -> None:
    key = "k" * 60
    assert settings_of(tmp_path, DJANGO_SECRET_KEY=key, **PRODUCTION).stdout.strip() == "31536000"
    assert settings_of(tmp_path, DJANGO_SECRET_KEY=key).stdout.strip() == "0"
    tuned = settings_of(tmp_path, DJANGO_SECRET_KEY=key, DJANGO_HSTS_SECONDS="60", **PRODUCTION)
    assert tuned.stdout.strip() == "60"
