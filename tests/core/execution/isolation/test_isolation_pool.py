"""The pool on its own: hooks around each case, per-slot environments, scripts, config keys."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from oloproof import evaluate
from oloproof.evaluators import Contains
from oloproof_core import InMemoryStore
from oloproof_core.cases.case import CaseResult
from oloproof_core.configs.run_config import load_run_config
from oloproof_core.errors import ConfigError
from oloproof_core.execution.isolation import ProcessPool, child_environment, is_secret_name
from tests.core.execution.isolation import systems

ROOT = Path(__file__).resolve().parents[4]


def cases(n):
    return [CaseResult(id=f"c{i}", input={"n": i}, expected=None) for i in range(n)]


def test_hooks_bracket_every_case_and_each_slot_gets_its_own_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-withheld")
    events = []
    records = cases(6)
    with ProcessPool(
        systems.environment,
        processes=2,
        child_env=lambda slot: {
            "OLOPROOF_ISOLATION_TEST": f"slot-{slot}",
            "OPENAI_API_KEY": f"key-{slot}",
        },
        on_case_start=lambda slot, case_id: events.append(("start", slot, case_id)),
        on_case_end=lambda slot, case_id: events.append(("end", slot, case_id)),
    ) as pool:
        pool.run(records)

    for record in records:
        starts = [event for event in events if event[2] == record.id]
        assert [kind for kind, _, _ in starts] == ["start", "end"]
        slot = starts[0][1]
        assert starts[1][1] == slot
        assert record.output["OLOPROOF_ISOLATION_TEST"] == f"slot-{slot}"
        assert record.output["OPENAI_API_KEY"] == f"key-{slot}"  # passed on purpose
    assert {slot for _, slot, _ in events} == {0, 1}


def test_the_pool_starts_once_for_several_batches_of_cases():
    pool = ProcessPool(systems.probe, processes=2)
    try:
        first, second = cases(4), cases(4)
        pool.run(first)
        pool.run(second)
    finally:
        pool.close()
    pids = {record.output["pid"] for record in first + second}
    assert len(pids) == 2
    assert pool.describe()["restarts"] == 0


def test_the_secret_rule():
    for name in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "OLOPROOF_JUDGE_API_KEY",
        "HF_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "DATABASE_URL",
        "CELERY_BROKER_URL",
        "pg_password",
    ):
        assert is_secret_name(name), name
    for name in ("PATH", "HOME", "OLOPROOF_DEFAULT_BASE_URL", "OPENAI_BASE_URL", "LANG"):
        assert not is_secret_name(name), name
    assert child_environment(
        {"OPENAI_API_KEY": "given"}, base={"OPENAI_API_KEY": "x", "PATH": "/bin"}
    ) == {"OPENAI_API_KEY": "given", "PATH": "/bin"}


def test_a_system_in_a_script_travels_by_value_without_rerunning_the_script(tmp_path):
    script = tmp_path / "bot.py"
    script.write_text(
        textwrap.dedent("""
        import json, os
        from oloproof import evaluate, system
        from oloproof.evaluators import evaluator

        @system(name="script-bot", version="1")
        def answer(case):
            return {"pid": os.getpid()}

        if __name__ == "__main__":
            result = evaluate(answer, [{"id": "a", "input": {}}, {"id": "b", "input": {}}],
                              [evaluator(criterion="ok", reads=("output",))(lambda c: True)],
                              record=False)
            print(json.dumps({"execution": result.provenance["execution"],
                              "pids": [case.output["pid"] for case in result.cases],
                              "me": os.getpid()}))
    """)
    )
    done = _python(tmp_path, str(script))

    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed["execution"]["isolation"] == "process"
    assert printed["execution"]["start"] == "value"
    assert printed["execution"]["measurements"] == "protected"
    assert printed["me"] not in printed["pids"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("isolation: docker", "'isolation' must be 'process' or 'thread'"),
        ("memory_limit_mb: -5", "'memory_limit_mb' must be a positive whole number, got"),
        ("memory_limit_mb: lots", "'memory_limit_mb' must be a positive whole number, got"),
    ],
)
def test_config_errors_for_the_new_keys_name_the_file_line_and_key(tmp_path, line, message):
    (tmp_path / "bot.py").write_text("def answer(case):\n    return {}\n")
    (tmp_path / "data.jsonl").write_text('{"id": "a", "input": {}}\n')
    config = tmp_path / "run.yaml"
    config.write_text(
        "system: bot.py:answer\ndataset: data.jsonl\n"
        "evaluators:\n  - ExactMatch: {criterion: x, field: label}\n" + line + "\n"
    )

    with pytest.raises(ConfigError) as raised:
        load_run_config(str(config))

    assert str(raised.value).startswith(f"{config}:5: ")
    assert message in str(raised.value)


def test_config_keys_reach_the_run(tmp_path):
    (tmp_path / "bot.py").write_text("def answer(case):\n    return {}\n")
    (tmp_path / "data.jsonl").write_text('{"id": "a", "input": {}}\n')
    config = tmp_path / "run.yaml"
    config.write_text(
        "system: bot.py:answer\ndataset: data.jsonl\n"
        "evaluators:\n  - ExactMatch: {criterion: x, field: label}\n"
        "isolation: thread\nmemory_limit_mb: 2048\n"
    )

    loaded = load_run_config(str(config))

    assert (loaded.isolation, loaded.memory_limit_mb) == ("thread", 2048)


def test_json_on_stdout_stays_clean_when_the_system_prints(tmp_path, monkeypatch, capfd):
    from oloproof.cli import main

    (tmp_path / "noisy.py").write_text(
        textwrap.dedent("""
        from oloproof import system

        @system(name="noisy", version="1")
        def answer(case):
            print("noise from the system")
            return {"label": "other"}
    """)
    )
    (tmp_path / "data.jsonl").write_text(
        '{"id": "a", "input": {}, "expected": {"label": "other"}}\n'
    )
    (tmp_path / "run.yaml").write_text(
        "system: noisy.py:answer\ndataset: data.jsonl\n"
        "evaluators:\n  - ExactMatch: {criterion: exact_label, field: label}\n"
    )
    monkeypatch.chdir(tmp_path)

    code = main(["run", "run.yaml", "--json", "-", "--no-progress", "--no-record"])

    captured = capfd.readouterr()
    assert code == 0
    printed = json.loads(captured.out)
    assert printed["provenance"]["execution"]["isolation"] == "process"
    assert printed["provenance"]["execution"]["reference"].endswith("noisy.py:answer")
    assert "noise from the system" in captured.err


def test_a_candidates_texts_reach_the_systems_own_process():
    candidate = systems.prompted.with_components({"instruction": "a candidate's text"}, version="2")
    result = evaluate(
        candidate,
        [{"id": "a", "input": {"n": 1}}],
        [Contains(criterion="read", field="instruction", value="candidate")],
        store=InMemoryStore(),
        record=False,
    )
    (case,) = result.cases
    assert result.provenance["execution"]["isolation"] == "process"
    assert case.output["pid"] != os.getpid()
    assert case.output["instruction"] == "a candidate's text"


def test_a_module_run_with_python_m_travels_by_its_real_name(tmp_path):
    package = tmp_path / "evals"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "check.py").write_text(
        textwrap.dedent("""
        import json, os
        from oloproof import evaluate, system
        from oloproof.evaluators import evaluator

        @system(name="m-bot", version="1")
        def answer(case):
            return {"pid": os.getpid()}

        if __name__ == "__main__":
            result = evaluate(answer, [{"id": "a", "input": {}}],
                              [evaluator(criterion="ok", reads=("output",))(lambda c: True)],
                              record=False)
            print(json.dumps(result.provenance["execution"]))
    """)
    )
    done = _python(tmp_path, "-m", "evals.check")

    assert done.returncode == 0, done.stderr
    execution = json.loads(done.stdout)
    assert (execution["start"], execution["reference"]) == ("reference", "evals.check:answer")


def _python(cwd, *args: str) -> subprocess.CompletedProcess[str]:
    """This interpreter run on `args` in `cwd`, with only oloproof on its path."""
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin"},
        timeout=120,
    )


def test_a_system_process_reads_bytecode_beside_the_sources_not_from_a_cache_prefix() -> None:
    """The prefix's folder is not in the sandbox: told to look there, a process would
    compile every module it imports, on every start."""
    given = {"PATH": "/bin", "PYTHONPYCACHEPREFIX": "/tmp/private-cache", "PYTHONHASHSEED": "0"}

    assert child_environment(base=given) == {"PATH": "/bin", "PYTHONHASHSEED": "0"}
