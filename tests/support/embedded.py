"""The environment of a fresh oloproof process on its own embedded store."""

from __future__ import annotations

import os
from pathlib import Path


def embedded_store_env(data_dir: Path, *, record: str | None = "1") -> dict[str, str]:
    """This process's environment for a child recording into the embedded store in
    `data_dir`, whatever `DATABASE_URL` the test session runs with. `record` sets
    `OLOPROOF_RECORD` (the test session keeps its own runs in memory); None leaves it."""
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env["OLOPROOF_DATA_DIR"] = str(data_dir)
    if record is not None:
        env["OLOPROOF_RECORD"] = record
    return env
