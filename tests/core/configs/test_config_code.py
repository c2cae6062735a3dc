"""The run's process holds a config's code as declared by its sandboxed probe: stand-ins
that cannot run here, and declarations checked as if the probe lied."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from oloproof_core.configs.code import (
    DeclaredEvaluator,
    DeclaredSystem,
    ProbeSettings,
    declare_config_code,
)
from oloproof_core.errors import DeclarationError
from oloproof_core.execution.isolation import IsolationError

BOT = """
from oloproof import system

@system(name="bot", version="3", components={"prompt": "Answer briefly."})
def answer(case):
    return {"label": "other"}
"""
CHECKS = """
from oloproof.evaluators import evaluator

@evaluator(criterion="known", reads=("output",))
def known(case):
    return True
"""
METRIC = """
SCORE_RANGE = (0, 10)

def score(input, output):
    return 10, {"feedback": "fine"}
"""


def _declared(folder: Path, **evaluators: str) -> object:
    settings = ProbeSettings(str(folder), None, "auto", [str(folder / "data.jsonl")])
    entries = dict(enumerate(evaluators.values()))
    return declare_config_code(settings, system="bot.py:answer", evaluators=entries)


def test_the_probe_declares_the_system_and_evaluators_as_they_are(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text(BOT, encoding="utf-8")
    (tmp_path / "checks.py").write_text(CHECKS, encoding="utf-8")
    (tmp_path / "scale.py").write_text(METRIC, encoding="utf-8")

    code = _declared(tmp_path, a="checks:known", b="scale.py")

    system = code.system  # type: ignore[attr-defined]
    assert (system.name, system.version, system.components) == (
        "bot",
        "3",
        {"prompt": "Answer briefly."},
    )
    known, scale = code.evaluators[0], code.evaluators[1]  # type: ignore[attr-defined]
    assert (known.criterion, known.reads, known.kind) == ("known", ("output",), "function")
    assert (scale.criterion, scale.score_range, scale.reads) == (
        "scale",
        (0.0, 10.0),
        ("input", "output"),
    )
    with pytest.raises(IsolationError, match="runs only in processes of its own"):
        system({"question": "hi"})
    with pytest.raises(IsolationError, match="judges in a process of its own"):
        scale.score({"q": 1}, {"label": "x"})
    release = system.with_components({"prompt": "Be terse."}, version="4")
    assert release.inner is system.inner
    assert release.declared_travel() == system.declared_travel()


def test_a_missing_attribute_and_a_failing_import_are_the_items_own_errors(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text(BOT, encoding="utf-8")
    (tmp_path / "checks.py").write_text("raise RuntimeError('no backend at import')\n")

    code = _declared(tmp_path, a="checks:known", b="absent.py")

    assert code.system is not None  # type: ignore[attr-defined]
    assert "checks.py:1: RuntimeError: no backend at import" in code.evaluators[0]  # type: ignore[attr-defined]
    assert "absent.py not found" in code.evaluators[1]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "declared",
    [
        {},
        {"name": "bot", "version": None, "components": "not a mapping", "import_path": None},
        {
            "name": "x" * 5000,
            "version": None,
            "components": {},
            "import_path": None,
            "reference": None,
            "value": "",
            "is_async": False,
        },
    ],
)
def test_a_malformed_system_declaration_is_refused(declared: dict[str, object]) -> None:
    with pytest.raises(DeclarationError):
        DeclaredSystem(declared)


def test_a_malformed_evaluator_declaration_is_refused() -> None:
    described = {
        "criterion": "bad.name",
        "reads": ["output"],
        "value_type": "pass_fail",
        "score_range": [0, 1],
        "kind": "function",
        "parameters": {},
        "source": None,
        "version": "v",
    }
    declared = {
        "described": described,
        "sub_score_range": [0, 1],
        "range_hint": "",
        "io_bound": False,
        "is_async": False,
        "pickled": "",
        "files": [],
        "folders": [],
    }
    with pytest.raises(DeclarationError):
        DeclaredEvaluator(declared)
    with pytest.raises(DeclarationError):
        DeclaredEvaluator(
            {**declared, "described": {**described, "criterion": "ok", "score_range": [1, 0]}}
        )


def test_the_probe_cannot_see_the_dataset_it_is_told_to_hide(tmp_path: Path) -> None:
    (tmp_path / "data.jsonl").write_text('{"id": "a", "input": {}, "expected": {}}\n')
    (tmp_path / "bot.py").write_text(
        "import os\nHERE = os.path.dirname(os.path.abspath(__file__))\n"
        "open(os.path.join(HERE, 'data.jsonl')).read()\n" + BOT,
        encoding="utf-8",
    )
    if os.environ.get("OLOPROOF_SANDBOX") == "off":
        pytest.skip("no sandbox asked for")

    code = _declared(tmp_path)

    assert "PermissionError" in (code.system_error or "")  # type: ignore[attr-defined]
