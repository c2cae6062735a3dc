"""Bad input, as a user gives it: each file and each mistake ends in exit 3 and a message
naming the file, the line, what is wrong and how to fix it — never a traceback.

Every command is the installed `oloproof`, run from a project folder outside the
repository with the user's environment.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.faces.conftest import write_project
from tests.journeys.conftest import run_user

POLICY = "version: 1\nrules:\n  - metric: exact_label\n    min: 0.5\n"


def _refused(done: subprocess.CompletedProcess[str], *said: str) -> None:
    assert done.returncode == 3, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    for text in said:
        assert text in done.stderr, done.stderr


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with one run's result file, `run.json`, and a policy it passes."""
    folder = tmp_path_factory.mktemp("bad-input") / "my-evals"
    write_project(folder)
    done = run_user(["oloproof", "run", "oloproof.yaml", "--json", "run.json"], cwd=folder)
    assert done.returncode == 0, done.stderr
    (folder / "release.yaml").write_text(POLICY, encoding="utf-8")
    return folder


def test_files_that_are_not_utf8_name_the_file_and_what_they_are(recorded: Path) -> None:
    result = (recorded / "run.json").read_text(encoding="utf-8")
    (recorded / "latin1.yaml").write_bytes(
        POLICY.replace("version: 1", "version: 1\ndescription: café").encode("latin-1")
    )
    (recorded / "utf16.yaml").write_bytes(POLICY.encode("utf-16"))
    (recorded / "binary.yaml").write_bytes(bytes(range(256)) * 4)
    (recorded / "utf16.json").write_bytes(result.encode("utf-16"))
    (recorded / "latin1.json").write_bytes(result.replace('"bot"', '"bót"').encode("latin-1"))
    (recorded / "binary.json").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 20)
    cases = [
        (["gate", "run.json", "latin1.yaml"], "latin1.yaml:2: not UTF-8 text", "Latin-1"),
        (["gate", "run.json", "utf16.yaml"], "utf16.yaml:1: not UTF-8 text", "UTF-16"),
        (["gate", "run.json", "binary.yaml"], "binary.yaml:2: not UTF-8 text", "binary data"),
        (["gate", "utf16.json", "release.yaml"], "utf16.json:1: not UTF-8", "UTF-16"),
        (["gate", "latin1.json", "release.yaml"], "latin1.json:", "Latin-1"),
        (["gate", "run.json", "release.yaml", "--baseline", "binary.json"], "binary.json:1:", ""),
        (["compare", "run.json", "utf16.json"], "utf16.json:1: not UTF-8", "UTF-16"),
    ]
    for args, where, kind in cases:
        _refused(run_user(["oloproof", *args], cwd=recorded), where, kind)
    config = (recorded / "oloproof.yaml").read_text(encoding="utf-8")
    (recorded / "latin1-config.yaml").write_bytes(f"# résumé\n{config}".encode("latin-1"))
    done = run_user(["oloproof", "run", "latin1-config.yaml", "--no-record"], cwd=recorded)
    _refused(done, "latin1-config.yaml:1: not UTF-8 text: byte 0xe9 at column 4", "iconv")


def test_a_result_file_nested_100000_deep_is_refused(recorded: Path) -> None:
    (recorded / "deep.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    (recorded / "deep-object.json").write_text(
        '{"metrics": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8"
    )
    for args in (
        ["gate", "deep.json", "release.yaml"],
        ["compare", "run.json", "deep-object.json"],
        ["gate", "run.json", "release.yaml", "--baseline", "deep.json"],
    ):
        done = run_user(["oloproof", *args], cwd=recorded)
        _refused(done, "not a result JSON file: its values are nested too deeply")


@pytest.mark.parametrize(
    ("evaluators", "said"),
    [
        (
            "  - ExactMatch: {criterion: exact_label, field: label}\n",
            "oloproof.yaml:1: 'system' has no value; give the import path of the system",
        ),
        (None, "oloproof.yaml:3: 'evaluators' has no value; give the list of evaluators"),
        (
            "  - Regex\n",
            "oloproof.yaml:3: evaluators[0]: Regex needs the parameter 'pattern'; write it as",
        ),
        ("  - Regex: null\n", "evaluators[0]: Regex needs the parameter 'pattern'"),
        ("  - Contains\n", "oloproof.yaml:3: evaluators[0]: Contains(criterion='contains') needs"),
    ],
)
def test_empty_keys_and_bare_evaluators_in_a_run_config(
    project: Path, evaluators: str | None, said: str
) -> None:
    system = "null" if "system" in said else "bot:answer"
    listed = "evaluators: null\n" if evaluators is None else f"evaluators:\n{evaluators}"
    (project / "oloproof.yaml").write_text(
        f"system: {system}\ndataset: data/cases.jsonl\n{listed}", encoding="utf-8"
    )
    _refused(run_user(["oloproof", "run", "oloproof.yaml", "--no-record"], cwd=project), said)


def test_a_dataset_is_looked_for_from_the_configs_folder(project: Path) -> None:
    (project / "configs").mkdir()
    (project / "configs" / "eval.yaml").write_text(
        "system: ../bot.py:answer\ndataset: data/cases.jsonl\nevaluators:\n"
        "  - ExactMatch: {criterion: exact_label, field: label}\n",
        encoding="utf-8",
    )
    done = run_user(["oloproof", "run", "configs/eval.yaml", "--no-record"], cwd=project)
    looked_for = project / "configs" / "data" / "cases.jsonl"
    _refused(
        done,
        f"configs/eval.yaml:2: dataset 'data/cases.jsonl' not found: looked for {looked_for}",
        f"relative paths resolve from the config's folder {project / 'configs'}",
    )
    assert "working directory" not in done.stderr
    (project / "eval.yaml").write_text(
        (project / "configs" / "eval.yaml")
        .read_text(encoding="utf-8")
        .replace("data/cases.jsonl", "data"),
        encoding="utf-8",
    )
    done = run_user(["oloproof", "run", "eval.yaml", "--no-record"], cwd=project)
    _refused(done, "eval.yaml:2: dataset 'data' is a folder", "files in it: cases.jsonl")


def test_a_bad_row_read_while_the_system_is_declared_names_its_line(project: Path) -> None:
    # The command reads the dataset beside the declaring of its code: a bad row is
    # still said as the run reads it, with its file and line, and nothing runs.
    rows = (project / "data" / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    rows[4] = rows[1]  # a second c01
    (project / "data" / "cases.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")

    done = run_user(["oloproof", "run", "oloproof.yaml"], cwd=project)

    _refused(done, "data/cases.jsonl:5: duplicate id 'c01' (first on line 2)")
    assert "recorded run" not in done.stdout + done.stderr


def test_unknown_keys_name_the_close_match(recorded: Path) -> None:
    config = (recorded / "oloproof.yaml").read_text(encoding="utf-8")
    (recorded / "typo.yaml").write_text(
        config.replace("evaluators:", "evaluator:"), encoding="utf-8"
    )
    done = run_user(["oloproof", "run", "typo.yaml", "--no-record"], cwd=recorded)
    _refused(done, "typo.yaml:3: unknown key 'evaluator' (did you mean 'evaluators'?)")
    (recorded / "typo.yaml").write_text(config.replace("ExactMatch", "Exactmatch"), "utf-8")
    done = run_user(["oloproof", "run", "typo.yaml", "--no-record"], cwd=recorded)
    _refused(done, "unknown evaluator 'Exactmatch' (did you mean 'ExactMatch'?)")
    (recorded / "typo-policy.yaml").write_text(POLICY.replace("rules:", "rule:"), encoding="utf-8")
    done = run_user(["oloproof", "gate", "run.json", "typo-policy.yaml"], cwd=recorded)
    _refused(done, "typo-policy.yaml:2: rule: unknown key 'rule' (did you mean 'rules'?)")


def test_a_result_file_of_the_wrong_shape_is_refused(recorded: Path) -> None:
    for name, content in (("list.json", []), ("metrics.json", {"metrics": [1], "provenance": 2})):
        (recorded / name).write_text(json.dumps(content), encoding="utf-8")
        done = run_user(["oloproof", "gate", name, "release.yaml"], cwd=recorded)
        _refused(done, f"{name}: not a result written by oloproof (--json)")


def test_a_system_named_by_a_relative_module_path_says_how_to_name_it(project: Path) -> None:
    (project / "configs").mkdir()
    (project / "configs" / "eval.yaml").write_text(
        "system: ../bot:answer\ndataset: ../data/cases.jsonl\nevaluators:\n"
        "  - ExactMatch: {criterion: exact_label, field: label}\n",
        encoding="utf-8",
    )
    done = run_user(["oloproof", "run", "configs/eval.yaml", "--no-record"], cwd=project)
    _refused(
        done,
        "configs/eval.yaml:1: system '../bot:answer': '../bot' is neither a module name",
        "write a file path, e.g. '../bot.py:answer'",
    )


def test_an_optimization_config_and_a_schema_file_not_in_utf8_say_so(recorded: Path) -> None:
    config = (recorded / "oloproof.yaml").read_text(encoding="utf-8")
    (recorded / "optimize.yaml").write_bytes(
        f"# café\n{config}budget: {{evaluations: 2}}\n".encode("latin-1")
    )
    done = run_user(["oloproof", "optimize", "optimize.yaml"], cwd=recorded)
    _refused(done, "optimize.yaml:1: not UTF-8 text", "Latin-1")
    (recorded / "reply.schema.json").write_bytes('{"title": "réponse"}'.encode("utf-16"))
    (recorded / "schema.yaml").write_text(
        config.replace(
            "ExactMatch: {criterion: exact_label, field: label}",
            "JsonSchema: {criterion: reply, schema: reply.schema.json}",
        ),
        encoding="utf-8",
    )
    done = run_user(["oloproof", "run", "schema.yaml", "--no-record"], cwd=recorded)
    _refused(done, "JsonSchema(criterion='reply'): reply.schema.json:1: not UTF-8", "UTF-16")


def test_a_file_to_write_that_cannot_be_written_is_named(recorded: Path) -> None:
    (recorded / "out.csv").mkdir(exist_ok=True)
    for args, said in (
        (["export", "1", "-o", "out.csv"], "out.csv: cannot write the export: Is a directory"),
        (["compare", "run.json", "run.json", "--export", "out.csv"], "out.csv: cannot write"),
        (["run", "oloproof.yaml", "--no-record", "--json", "out.csv"], "out.csv: cannot write"),
        (["export", "1", "-o", "no/such/folder.csv"], "folder.csv: cannot write the export"),
    ):
        _refused(run_user(["oloproof", *args], cwd=recorded), said)
