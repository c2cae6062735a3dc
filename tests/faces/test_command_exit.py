"""The command as a process: what user code running in it writes is all there at exit.

With `isolation: thread` (trusted code) the system and its evaluators run in the
command's own process, which ends without the interpreter's teardown
(`oloproof_core/_util/process_exit.py`). That must not lose their last writes (an unclosed
file, an atexit handler), cut a thread of theirs short, or change the exit code and what
the command prints.
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


USER_THREAD_STILL_WRITING = """
import threading, time
from oloproof import system
from oloproof.evaluators import evaluator

def _write_late():
    time.sleep(1.0)
    with open("thread.txt", "w") as handle:
        handle.write("finished")

@system(name="plain", version="1")
def answer(case):
    return {"label": "x"}

@evaluator(criterion="starts_a_thread", reads=("input", "output"))
def starts_a_thread(case):
    if case.id == "c0":
        threading.Thread(target=_write_late).start()  # not a daemon: the exit waits
    return True
"""


def _run_command(tmp_path: Path, code: str, *extra: str, cases: int = 50, config: str = ""):
    (tmp_path / "writer.py").write_text(code)
    rows = [{"id": f"c{i}", "input": {"q": i}} for i in range(cases)]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    evaluator = code.split("def ")[-1].split("(")[0]
    (tmp_path / "oloproof.yaml").write_text(
        f"system: writer:answer\ndataset: cases.jsonl\nevaluators:\n  - writer:{evaluator}\n"
        "isolation: thread\n" + config
    )
    return subprocess.run(
        [sys.executable, "-m", "oloproof", "run", "oloproof.yaml", "--no-record", *extra],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=embedded_store_env(tmp_path / ".oloproof"),
    )


def test_user_code_in_the_command_process_still_writes_everything_at_exit(
    tmp_path: Path,
) -> None:
    done = _run_command(tmp_path, USER_CODE_THAT_WRITES_AT_EXIT)
    rows = [{"id": f"c{i}"} for i in range(50)]
    assert done.returncode == 0, done.stderr
    logged = (tmp_path / "judged.log").read_text().split()
    assert sorted(logged) == sorted(row["id"] for row in rows)  # one per case: no cache hit
    assert (tmp_path / "atexit.txt").read_text() == "ran"


def test_a_thread_user_code_left_running_finishes_before_the_process_ends(
    tmp_path: Path,
) -> None:
    done = _run_command(tmp_path, USER_THREAD_STILL_WRITING, cases=3)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "thread.txt").read_text() == "finished"


def test_the_exit_code_and_everything_printed_survive_the_quick_exit(tmp_path: Path) -> None:
    (tmp_path / "policy.yaml").write_text(
        "version: 1\nrules:\n  - metric: logged\n    min: 0.999\n"
    )
    done = _run_command(
        tmp_path,
        USER_CODE_THAT_WRITES_AT_EXIT,
        "--json",
        "-",
        cases=400,
        config="policy: policy.yaml\n",
    )
    assert done.returncode == 2, done.stderr  # 400 passes cannot clear 0.999: inconclusive
    printed = json.loads(done.stdout)
    assert printed["gate"]["outcome"] == "inconclusive"
    assert len(printed["cases"]) == 400
