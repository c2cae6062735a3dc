"""User folders named like the platform's packages (`metrics`, `runs`, `evalsite`) break nothing."""

from __future__ import annotations

from pathlib import Path

from tests.faces.conftest import oloproof, python, write_project

METRIC = """
def score(input, output, expected=None):
    ok = output["label"] == expected["label"]
    return ({good} if ok else {bad}), {{"feedback": "project {name}"}}
"""


def _project_with_metrics_folder(folder: Path, name: str, good: float, bad: float) -> Path:
    write_project(folder, extra_yaml="  - metrics/label/metric.py\n")
    (folder / "metrics" / "label").mkdir(parents=True)
    (folder / "metrics" / "label" / "metric.py").write_text(
        METRIC.format(good=good, bad=bad, name=name), encoding="utf-8"
    )
    return folder


def test_two_projects_with_their_own_metrics_folders(tmp_path: Path) -> None:
    first = _project_with_metrics_folder(tmp_path / "a", "a", 1.0, 0.0)
    second = _project_with_metrics_folder(tmp_path / "b", "b", 0.5, 0.5)
    # One project's metrics/ is a regular package, the other's a plain folder; each has
    # runs/ and evalsite/ folders too, and the command starts inside it (on sys.path).
    (first / "metrics" / "__init__.py").write_text("raise ImportError('not me')\n")
    for project in (first, second):
        for name in ("runs", "evalsite"):
            (project / name).mkdir()
            (project / name / "__init__.py").write_text("raise ImportError('not me')\n")

    for project in (first, second):
        done = oloproof("run", "oloproof.yaml", cwd=project)
        assert done.returncode == 0, done.stderr
        assert "recorded run #1" in done.stderr
        assert "Traceback" not in done.stderr

    # One process, both projects: each metric file (and each bot.py) is its own module;
    # the process records into the store of the project it started in.
    out = python(
        f"""
        import oloproof
        from oloproof.evaluators import MetricFile
        from oloproof_core import load_run_config
        for folder in ({str(first)!r}, {str(second)!r}):
            config = load_run_config(folder + "/oloproof.yaml")
            result = oloproof.evaluate(config.system, config.dataset, config.evaluators)
            print(result.metric("label").estimate, result.run_id)
        """,
        cwd=first,
    )
    assert out.split() == ["1.0", "2", "0.5", "3"]
