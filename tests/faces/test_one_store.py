"""One store, found the same way by every face, from anywhere inside a project."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evalsite.project import data_dir, project_root
from tests.faces.conftest import clean_env, oloproof, python, write_project


def test_the_data_folder_is_found_from_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OLOPROOF_DATA_DIR", raising=False)
    root = tmp_path / "proj"
    deep = root / "evals" / "deep"
    deep.mkdir(parents=True)
    (root / "pyproject.toml").write_text("", encoding="utf-8")
    (root / "evals" / "oloproof.yaml").write_text("", encoding="utf-8")
    # A project root (pyproject.toml) wins over a folder that only holds a config...
    assert project_root(deep) == root
    assert data_dir(deep) == root / ".oloproof"
    # ...and an existing store wins over both, nearest first.
    (root / "evals" / ".oloproof").mkdir()
    assert data_dir(deep) == root / "evals" / ".oloproof"
    monkeypatch.setenv("OLOPROOF_DATA_DIR", str(tmp_path / "elsewhere"))
    assert data_dir(deep) == tmp_path / "elsewhere"


def test_no_project_falls_back_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OLOPROOF_DATA_DIR", raising=False)
    if project_root(tmp_path) is not None:
        pytest.skip("the temporary folder lies inside a project")
    assert data_dir(tmp_path) == tmp_path / ".oloproof"


def test_run_gate_compare_and_evaluate_share_the_project_store(project: Path) -> None:
    sub = project / "notes"
    sub.mkdir()
    first = oloproof("run", str(project / "oloproof.yaml"), cwd=sub)
    assert first.returncode == 0, first.stderr
    last = first.stderr.strip().splitlines()[-1]
    assert last == "recorded run #1 → http://127.0.0.1:8000/runs/1/"
    assert f"store: {project / '.oloproof' / 'oloproof.sqlite3'}" in first.stderr
    assert (project / ".oloproof" / "oloproof.sqlite3").is_file()
    assert not (sub / ".oloproof").exists()

    write_project(project, version="2")
    second = oloproof("run", "oloproof.yaml", cwd=project)
    assert "recorded run #2 →" in second.stderr, second.stderr

    # The policy's baseline is a release: looked up in the same store as `run` used.
    (project / "release.yaml").write_text(
        "version: 1\nbaseline: {release: 'bot@1'}\nrules:\n"
        "  - metric: exact_label\n    no_regression: {margin: 0.5}\n",
        encoding="utf-8",
    )
    gated = oloproof("gate", "2", "release.yaml", cwd=sub.parent)
    assert gated.returncode in (0, 2), gated.stderr
    assert "vs baseline" in gated.stdout
    compared = oloproof("compare", "1", "#2", cwd=sub)
    assert compared.returncode == 0, compared.stderr
    assert "exact_label" in compared.stdout

    # The library, started in a subfolder, records into the same store and loads from it.
    out = python(
        """
        import oloproof
        from oloproof.evaluators import ExactMatch
        from bot import answer
        result = oloproof.evaluate(answer, "../data/cases.jsonl",
                                   [ExactMatch(criterion="exact_label", field="label")],
                                   baseline=1, policy="../release.yaml")
        print(result.run_id, result.extras["run_url"], result.gate.outcome)
        print(oloproof.load(1).metrics[0].n_observed, oloproof.load("2").run_id)
        print(oloproof.gate(2, "../release.yaml", baseline="1").rules[0].kind)
        """,
        cwd=sub,
        env=clean_env(PYTHONPATH=f"{clean_env()['PYTHONPATH']}:{project}"),
    )
    lines = out.splitlines()
    assert re.fullmatch(r"3 http://127\.0\.0\.1:8000/runs/3/ \w+", lines[0]), out
    assert lines[1] == "12 2"
    assert lines[2] == "no_regression"


def test_the_dashboard_address_is_the_one_serve_noted(project: Path) -> None:
    data = project / ".oloproof"
    data.mkdir()
    (data / "dashboard.json").write_text('{"url": "http://127.0.0.1:9123/"}', encoding="utf-8")
    done = oloproof("run", "oloproof.yaml", cwd=project)
    assert done.stderr.strip().endswith("recorded run #1 → http://127.0.0.1:9123/runs/1/")
    off = oloproof("run", "oloproof.yaml", "--no-record", cwd=project)
    assert "recorded run" not in off.stderr


def test_a_run_id_that_is_not_recorded_is_a_clear_error(project: Path) -> None:
    oloproof("run", "oloproof.yaml", cwd=project)
    done = oloproof("compare", "1", "99", cwd=project)
    assert done.returncode == 3
    assert "no run #99 in this store" in done.stderr
    assert "Traceback" not in done.stderr
