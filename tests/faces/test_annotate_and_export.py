"""`oloproof annotate` / `oloproof export` and the library's `annotate`, `annotations` and
`export_cases`, in fresh processes on a user's project store."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.faces.conftest import clean_env, oloproof, python, write_project


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """One recorded run of twelve cases (c00 … c11), shared by this module's tests."""
    project = tmp_path_factory.mktemp("annotate") / "my-evals"
    write_project(project)
    env = clean_env(OLOPROOF_DATA_DIR=str(project / ".store"))
    done = oloproof("run", "oloproof.yaml", cwd=project, env=env)
    assert "recorded run #1" in done.stderr, done.stderr
    return project, env


def test_the_command_annotates_edits_shows_and_exports(recorded) -> None:
    project, env = recorded
    first = oloproof(
        "annotate",
        "1",
        "c03",
        "--rating",
        "fail",
        "--comment",
        "=looks wrong",
        cwd=project,
        env=env,
    )
    assert first.returncode == 0, first.stderr
    assert "@command-line" in first.stdout
    edited = oloproof("annotate", "#1", "c03", "--score", "0.4", cwd=project, env=env)
    assert edited.returncode == 0, edited.stderr
    shown = oloproof("annotate", "1", "c03", "--show", "--json", cwd=project, env=env)
    [current] = json.loads(shown.stdout)
    assert (current["rating"], current["score"], current["comment"]) == (
        "fail",
        0.4,
        "=looks wrong",
    )
    trail = oloproof("annotate", "1", "c03", "--history", "--json", cwd=project, env=env)
    assert [(c["version"], c["score"]) for c in json.loads(trail.stdout)] == [(1, None), (2, 0.4)]
    exported = oloproof("export", "1", "-o", "cases.csv", cwd=project, env=env)
    assert exported.returncode == 0, exported.stderr
    assert "12 cases of run #1 written to cases.csv" in exported.stderr
    rows = list(csv.DictReader((project / "cases.csv").open(encoding="utf-8", newline="")))
    assert len(rows) == 12
    annotated = [row for row in rows if row["annotations"]]
    assert [row["case_id"] for row in annotated] == ["c03"]
    assert json.loads(annotated[0]["annotations"])[0]["comment"] == "=looks wrong"
    only = oloproof("export", "1", "--annotation", "annotated", cwd=project, env=env)
    records = [json.loads(line) for line in only.stdout.splitlines()]
    assert [(r["case_id"], r["verdicts"]["exact_label"]["outcome"]) for r in records] == [
        ("c03", "passed")
    ]


def test_mistakes_are_clear_errors_without_tracebacks(recorded) -> None:
    project, env = recorded
    for args, message in (
        (("annotate", "1", "nope", "--rating", "fail"), "run 1 has no case 'nope'"),
        (("annotate", "9", "c01", "--rating", "fail"), "no run with id 9"),
        (("annotate", "1", "c01", "--score", "3"), "score must be a number from 0 to 1"),
        (("annotate", "1", "c01"), "give --rating, --score or --comment"),
        (("annotate", "1", "c01", "--rating", "pass", "--by", "ghost"), "no account 'ghost'"),
        (("export", "1", "-o", "cases.xlsx"), "export format must be csv or jsonl"),
    ):
        done = oloproof(*args, cwd=project, env=env)
        assert done.returncode == 3, (args, done.stdout, done.stderr)
        assert message in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr


def test_the_library_does_what_the_command_does(recorded) -> None:
    project, env = recorded
    out = python(
        """
        import io, json, oloproof
        oloproof.annotate(1, "c01", rating="pass", comment="fine")
        oloproof.annotate(1, "c01", comment="fine, on reflection")
        print(json.dumps(oloproof.annotations(1, "c01")))
        print(json.dumps(oloproof.annotations(1, "c01", history=True)))
        buffer = io.StringIO()
        print(oloproof.export_cases(1, buffer, format="jsonl", annotation="rated_pass"))
        print(buffer.getvalue().strip())
        print(oloproof.export_cases(1, "all.csv"))
        """,
        cwd=project,
        env=env,
    )
    current, trail, count, record, written = out.strip().splitlines()
    assert [(a["rating"], a["comment"]) for a in json.loads(current)] == [
        ("pass", "fine, on reflection")
    ]
    assert [c["comment"] for c in json.loads(trail)] == ["fine", "fine, on reflection"]
    assert count == "1"
    assert json.loads(record)["annotations"][0]["rating"] == "pass"
    assert written == "12"
    assert len(list(csv.DictReader(io.StringIO((project / "all.csv").read_text())))) == 12
