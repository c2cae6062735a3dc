"""`oloproof run` on a machine whose operator set `OLOPROOF_SANDBOX=required`: a config
that lowers it (`sandbox: off`, `isolation: thread`) is bad input, exit 3, with the file,
the setting and the variable named, no traceback, and the system never runs; here or
queued with `--submit`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faces.conftest import clean_env, oloproof, write_project

MARKING_BOT = """
from pathlib import Path

from oloproof import system


@system(name="bot", version="1")
def answer(case):
    Path(__file__).with_name("ran.txt").write_text("the system ran")
    return {"label": "refund"}
"""


@pytest.mark.parametrize(
    ("line", "named"),
    [("sandbox: off\n", "sandbox: off"), ("isolation: thread\n", "isolation: thread")],
)
@pytest.mark.parametrize("where", [(), ("--submit",)], ids=["here", "submit"])
def test_a_config_that_lowers_the_floor_exits_3_and_runs_nothing(
    tmp_path: Path, line: str, named: str, where: tuple[str, ...]
) -> None:
    folder = tmp_path / "my-evals"
    write_project(folder, n=3, extra_yaml=line)
    (folder / "bot.py").write_text(MARKING_BOT, encoding="utf-8")
    env = clean_env(OLOPROOF_SANDBOX="required", OLOPROOF_DATA_DIR=str(tmp_path / "data"))
    record = () if where else ("--no-record",)

    done = oloproof("run", "oloproof.yaml", *where, *record, cwd=folder, env=env)

    assert done.returncode == 3, done.stdout + done.stderr
    assert "oloproof.yaml" in done.stderr
    assert f"{named} " in done.stderr
    assert "this machine's operator set OLOPROOF_SANDBOX=required" in done.stderr
    assert f"remove `{named}`" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (folder / "ran.txt").exists()


def test_the_same_config_runs_where_the_operator_set_no_floor(tmp_path: Path) -> None:
    folder = tmp_path / "my-evals"
    write_project(folder, n=3, extra_yaml="sandbox: off\n")
    (folder / "bot.py").write_text(MARKING_BOT, encoding="utf-8")

    done = oloproof("run", "oloproof.yaml", "--no-record", cwd=folder, env=clean_env())

    assert done.returncode == 0, done.stdout + done.stderr
    assert (folder / "ran.txt").exists()
