"""Project code is imported per folder: same module names never share `sys.modules`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from oloproof_core import ConfigError, load_object, namespace_for
from oloproof_core.configs.run_config import run_config_from_mapping


def project(root: Path, answer: str) -> Path:
    root.mkdir(parents=True)
    (root / "helpers.py").write_text(f"ANSWER = {answer!r}\n")
    (root / "bot.py").write_text(
        "import helpers\n\ndef answer(case):\n    return {'label': helpers.ANSWER}\n"
    )
    return root


def test_two_projects_both_naming_bot_answer_each_run_their_own(tmp_path: Path) -> None:
    first = project(tmp_path / "first", "one")
    second = project(tmp_path / "second", "two")
    one = load_object("bot:answer", base_dir=str(first))
    two = load_object("bot:answer", base_dir=str(second))
    assert one({}) == {"label": "one"}
    assert two({}) == {"label": "two"}
    assert one.__module__ == f"{namespace_for(str(first))}.bot"
    # Nothing is left under the plain names, and neither folder went on sys.path.
    assert "bot" not in sys.modules
    assert "helpers" not in sys.modules
    assert str(first) not in sys.path
    assert str(second) not in sys.path


def test_a_planted_module_does_not_stand_in_for_another_projects(tmp_path: Path) -> None:
    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / "colorsys.py").write_text("HIJACKED = True\n")
    (planted / "bot.py").write_text("import colorsys\n\ndef answer(case):\n    return {}\n")
    load_object("bot:answer", base_dir=str(planted))
    import colorsys

    assert not hasattr(colorsys, "HIJACKED")


def test_file_references_are_namespaced_by_folder_too(tmp_path: Path) -> None:
    first = project(tmp_path / "a", "a")
    second = project(tmp_path / "b", "b")
    assert load_object("bot.py:answer", base_dir=str(first))({}) == {"label": "a"}
    assert load_object("bot.py:answer", base_dir=str(second))({}) == {"label": "b"}


def test_with_roots_code_outside_them_is_refused(tmp_path: Path) -> None:
    inside = project(tmp_path / "root" / "bot", "in")
    outside = project(tmp_path / "elsewhere", "out")
    roots = [str(tmp_path / "root")]
    assert load_object("bot:answer", base_dir=str(inside), roots=roots)({}) == {"label": "in"}
    with pytest.raises(ConfigError, match="outside the project's registered code roots"):
        load_object("bot:answer", base_dir=str(outside), roots=roots)
    with pytest.raises(ConfigError, match="not in the run's folder"):
        load_object("json:dumps", base_dir=str(inside), roots=roots)
    # A link inside the root that points out of it is followed, then refused.
    (inside / "linked.py").symlink_to(outside / "bot.py")
    with pytest.raises(ConfigError, match="outside"):
        load_object("linked.py:answer", base_dir=str(inside), roots=roots)


def test_a_config_naming_files_outside_the_roots_is_refused(tmp_path: Path) -> None:
    inside = project(tmp_path / "root", "in")
    config = {"system": "bot:answer", "dataset": "../secret.csv", "evaluators": ["Contains"]}
    with pytest.raises(ConfigError, match=r"dataset .*secret\.csv is outside"):
        run_config_from_mapping(config, base_dir=str(inside), label="c", roots=[str(inside)])
