"""A hostile system, run by `oloproof run` with recording on and the operator's secrets in
the environment, tries the reads a process of its own still allowed: the answers, the
store, the parent's environment and memory, a model without the gateway, and a
grandchild that outlives the run. In the sandbox each is an OS error inside its own
case; with the sandbox off (the same run) each succeeds, which is what the sandbox is for.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from oloproof_core.execution.isolation import sandbox_support
from oloproof_core.results.reading import load_result

pytestmark = pytest.mark.skipif(
    not sandbox_support().available,
    reason=f"no sandbox on this machine: {sandbox_support().reason}",
)

SECRETS = {
    "OPENAI_API_KEY": "sk-provider-key-" + uuid.uuid4().hex,
    "DJANGO_SECRET_KEY": "django-secret-" + uuid.uuid4().hex,
    "CELERY_BROKER_URL": f"redis://:broker-password-{uuid.uuid4().hex}@127.0.0.1:6379/9",
}

HOSTILE = textwrap.dedent(
    """
    import json, os, subprocess, time, urllib.request
    from oloproof import system

    def answers():
        with open("cases.jsonl") as rows:
            return {json.loads(line)["id"]: json.loads(line)["expected"] for line in rows}

    def forge_store():
        import sqlite3
        path = os.path.join(os.environ["OLOPROOF_DATA_DIR"], "oloproof.sqlite3")
        for _ in range(100):  # the store opens beside the run: wait for its file
            if os.path.exists(path) or os.path.exists(os.path.dirname(path) + "/secret_key"):
                break
            time.sleep(0.05)
        with open(path, "rb") as handle:  # the plain read first: sqlite3 hides the errno
            handle.read(16)
        sqlite3.connect(path).execute("select 1").fetchall()
        return "opened"

    def parent_environment():
        with open(f"/proc/{os.getppid()}/environ", "rb") as handle:
            return handle.read().decode(errors="replace").replace("\\0", "\\n")

    def parent_memory():
        maps = open(f"/proc/{os.getppid()}/maps").read().splitlines()
        with open(f"/proc/{os.getppid()}/mem", "rb") as memory:
            found = 0
            for line in maps:
                span, perms = line.split()[:2]
                if not perms.startswith("r"):
                    continue
                start, end = (int(part, 16) for part in span.split("-"))
                try:
                    memory.seek(start)
                    found += memory.read(min(end - start, 1 << 24)).count(b"sk-provider-key-")
                except OSError:
                    continue
            return found

    def bypass_gateway():
        request = urllib.request.Request(
            os.environ["PROVIDER_URL"] + "/chat/completions",
            data=json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
            .encode(),
            headers={"Content-Type": "application/json"},
        )
        return json.loads(urllib.request.urlopen(request, timeout=5).read())["model"]

    def grandchild():
        subprocess.Popen(
            ["sleep", os.environ["MARKER"]],
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return "started"

    ATTACKS = {
        "answers": lambda: answers()["c_answers"],
        "store": forge_store,
        "environ": parent_environment,
        "mem": parent_memory,
        "bypass": bypass_gateway,
        "grandchild": grandchild,
    }

    @system(name="hostile", version="1")
    def answer(case):
        return {"label": "x", "loot": ATTACKS[case["attack"]]()}
    """
)
ATTACKS = ("answers", "store", "environ", "mem", "bypass", "grandchild")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "hostile.py").write_text(HOSTILE)
    rows = [
        {"id": f"c_{name}", "input": {"attack": name}, "expected": {"label": f"secret-{name}"}}
        for name in ATTACKS
    ]
    (folder / "cases.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return folder


def run_command(project: Path, fake_openai, sandbox: str, **extra: str) -> tuple[dict, str]:
    (project / "oloproof.yaml").write_text(
        f"system: hostile:answer\ndataset: cases.jsonl\nsandbox: {sandbox}\n"
        "evaluators:\n  - ExactMatch: {criterion: exact_label, field: label}\n"
    )
    marker = f"{time.time() % 1000:.6f}{os.getpid() % 1000}"
    environment = {
        **{name: value for name, value in os.environ.items() if not name.startswith("OLOPROOF")},
        **SECRETS,
        "OLOPROOF_RECORD": "1",
        "OLOPROOF_DATA_DIR": str(project / ".oloproof"),
        "PROVIDER_URL": fake_openai.base_url,
        "MARKER": marker,
        # A system's process gets only what it needs and what the operator names.
        "OLOPROOF_SYSTEM_ENV": "OLOPROOF_DATA_DIR,PROVIDER_URL,MARKER",
        **extra,
    }
    done = subprocess.run(
        [sys.executable, "-m", "oloproof", "run", "oloproof.yaml", "--json", "result.json"],
        cwd=project,
        env=environment,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    time.sleep(0.3)  # a grandchild that survived is still asleep; one that did not is gone
    survivors = _processes_with(marker)
    for pid in survivors:
        os.kill(pid, 9)
    result = load_result(str(project / "result.json"))
    cases = {case.id.removeprefix("c_"): case for case in result.cases}
    return {"cases": cases, "survivors": survivors, "result": result}, done.stderr


def test_in_the_sandbox_every_read_is_an_os_error_inside_its_case(project, fake_openai):
    run, _ = run_command(project, fake_openai, "auto")
    cases = run["cases"]

    for name in ("answers", "store", "environ", "mem"):
        error = cases[name].error
        assert error is not None, (name, cases[name].output)
        assert error.type in {"PermissionError", "FileNotFoundError"}, (name, error)
    assert cases["bypass"].error.type in {"URLError", "ConnectionRefusedError"}
    assert fake_openai.request_count == 0
    assert cases["grandchild"].error is None
    assert run["survivors"] == [], "a process the system started outlived its case"
    assert not any(secret in json.dumps(_outputs(cases)) for secret in SECRETS.values())
    execution = run["result"].provenance["execution"]
    assert execution["measurements"] == execution["answers"] == "protected"
    assert execution["sandbox"]["on"] is True
    assert str(project / "cases.jsonl") in execution["sandbox"]["hidden"]
    assert _recorded_latencies_untouched(project)


def test_without_the_sandbox_the_same_system_reads_everything(project, fake_openai):
    run, stderr = run_command(project, fake_openai, "off")
    cases = run["cases"]

    assert "without a sandbox" not in stderr  # asked for: nothing to warn about
    assert cases["answers"].output["loot"] == {"label": "secret-answers"}
    assert cases["store"].output["loot"] == "opened"
    assert SECRETS["OPENAI_API_KEY"] in cases["environ"].output["loot"]
    assert cases["mem"].output["loot"] >= 1
    assert cases["bypass"].output["loot"] == "default-model" or fake_openai.request_count == 1
    assert run["survivors"], "the grandchild should have outlived the run without a sandbox"
    execution = run["result"].provenance["execution"]
    assert execution["measurements"] == execution["answers"] == "not protected"
    assert execution["sandbox"] == {"on": False, "reason": "switched off (sandbox: off)"}


def _outputs(cases: dict) -> dict:
    return {name: case.output for name, case in cases.items()}


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if marker.encode() in handle.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def _recorded_latencies_untouched(project: Path) -> bool:
    with sqlite3.connect(project / ".oloproof" / "oloproof.sqlite3") as database:
        latencies = [row[0] for row in database.execute("select latency_ms from runs_caseresult")]
    return len(latencies) == len(ATTACKS) and all(value is None or value > 0 for value in latencies)


def test_where_no_sandbox_can_be_made_the_run_says_so_first(project, fake_openai):
    run, stderr = run_command(project, fake_openai, "auto", PATH="/nowhere")

    assert "the system runs without a sandbox" in stderr
    assert "bubblewrap is not installed" in stderr
    execution = run["result"].provenance["execution"]
    assert execution["measurements"] == execution["answers"] == "not protected"
    assert execution["sandbox"]["on"] is False
    assert "bubblewrap is not installed" in execution["sandbox"]["reason"]


def test_a_run_that_requires_the_sandbox_refuses_to_start_without_one(project, fake_openai):
    (project / "oloproof.yaml").write_text(
        "system: hostile:answer\ndataset: cases.jsonl\nsandbox: required\n"
        "evaluators:\n  - ExactMatch: {criterion: exact_label, field: label}\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "oloproof", "run", "oloproof.yaml", "--no-record"],
        cwd=project,
        env={**os.environ, "PATH": "/nowhere"},
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert "sandbox: required, but no sandbox can be made here" in done.stderr


def test_root_runs_the_system_as_nobody_where_its_code_is_open_to_others(project, fake_openai):
    run, _ = run_command(project, fake_openai, "auto")

    expected = "nobody" if os.geteuid() == 0 else f"uid {os.getuid()}"
    assert expected in run["result"].provenance["execution"]["sandbox"]["user"]


@pytest.mark.skipif(os.geteuid() != 0, reason="only root's children are dropped to nobody")
def test_code_closed_to_others_runs_with_roots_uid_mapped_and_still_sees_no_answers(
    tmp_path, monkeypatch
):
    folder = tmp_path / "closed"
    folder.mkdir(mode=0o700)
    (folder / "closed_system.py").write_text(
        "import os\nfrom oloproof import system\n\n"
        "@system(name='closed', version='1')\n"
        "def answer(case):\n"
        "    open(os.path.join(os.path.dirname(__file__), 'cases.jsonl')).read()\n"
    )
    (folder / "cases.jsonl").write_text('{"id": "a", "input": {}, "expected": {"n": 1}}\n')
    monkeypatch.syspath_prepend(str(folder))
    from closed_system import answer

    from oloproof import evaluate
    from oloproof.evaluators import ExactMatch

    result = evaluate(
        answer, str(folder / "cases.jsonl"), [ExactMatch(criterion="n", field="n")],
        record=False, sandbox="required",
    )  # fmt: skip

    sandbox = result.provenance["execution"]["sandbox"]
    assert sandbox["on"] is True
    assert "mapped to root outside" in sandbox["user"]
    assert result.cases[0].error.type == "PermissionError"
