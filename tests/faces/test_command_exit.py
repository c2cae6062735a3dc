"""The command as a process: what user code running in it writes is all there at exit.

Evaluators and metric files run in the command's own process. Whatever is done to make
the command end sooner (its interpreter's shutdown is about a tenth of a second) must
not lose their last writes: an unclosed file flushed at shutdown, an atexit handler.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.embedded import embedded_store_env

USER_CODE_THAT_WRITES_AT_EXIT = """
import atexit
from oloproof import system
from oloproof.evaluators import evaluator


LOG = open("judged.log", "a")  # never closed: written out when the process ends
atexit.register(lambda: open("atexit.txt", "w").write("ran"))

@system(name="plain", version="1")
def answer(case):
    return {"label": "x"}

@evaluator(criterion="logged", reads=("input", "output"))
def logged(case):
    LOG.write(case.id + "\\n")
    return True
"""


def test_user_code_in_the_command_process_still_writes_everything_at_exit(
    tmp_path: Path,
) -> None:
    (tmp_path / "writer.py").write_text(USER_CODE_THAT_WRITES_AT_EXIT)
    rows = [{"id": f"c{i}", "input": {"q": i}} for i in range(50)]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (tmp_path / "oloproof.yaml").write_text(
        "system: writer:answer\ndataset: cases.jsonl\nevaluators:\n  - writer:logged\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "oloproof", "run", "oloproof.yaml", "--no-record"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=embedded_store_env(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    logged = (tmp_path / "judged.log").read_text().split()
    assert sorted(logged) == sorted(row["id"] for row in rows)  # one per case: no cache hit
    assert (tmp_path / "atexit.txt").read_text() == "ran"
