"""Test files that start real workers over the shared Redis each take a database of their
own: two files run at once (one per test process) and would take each other's tasks."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2]


def test_no_two_test_files_share_a_redis_database() -> None:
    users: dict[int, list[str]] = defaultdict(list)
    for path in TESTS.rglob("test_*.py"):
        for found in re.finditer(r"^REDIS_DB = (\d+)$", path.read_text(encoding="utf-8"), re.M):
            users[int(found[1])].append(str(path.relative_to(TESTS)))
    shared = {db: files for db, files in users.items() if len(files) > 1}
    assert users, "no test file names its Redis database any more: update this test"
    assert not shared, shared
