"""`OLOPROOF_SANDBOX=required` is the operator's floor: no run lowers it.

Where the process that runs the code has it, `sandbox="off"` and `isolation="thread"`
are refused before any case runs, naming the setting and the variable, and `auto` asked
explicitly runs as required. Without the floor nothing changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from oloproof import evaluate, system
from oloproof.evaluators import ExactMatch
from oloproof_core import ConfigError, SandboxFloorError, plan_run, protections
from oloproof_core.execution.isolation import sandbox_support
from oloproof_core.results.store import InMemoryStore

EVALUATORS = [ExactMatch(criterion="exact_label", field="label")]


@system(name="leaves-a-mark", version="1")
def leaves_a_mark(case: dict[str, Any]) -> dict[str, str]:
    """Writes the file its case names: a run that reached it leaves the file behind."""
    Path(case["marker"]).write_text("the system ran", encoding="utf-8")
    return {"label": "refund"}


@system(name="plain", version="1")
def plain(case: dict[str, Any]) -> dict[str, str]:
    return {"label": "refund"}


def rows(marker: Path, n: int = 3) -> list[dict[str, Any]]:
    return [
        {"id": f"c{i}", "input": {"marker": str(marker)}, "expected": {"label": "refund"}}
        for i in range(n)
    ]


@pytest.fixture
def floor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLOPROOF_SANDBOX", "required")


@pytest.mark.parametrize(
    ("asked", "named"),
    [
        ({"sandbox": "off"}, "sandbox: off"),
        ({"isolation": "thread"}, "isolation: thread"),
        ({"isolation": "thread", "sandbox": "required"}, "isolation: thread"),
    ],
)
def test_a_run_that_lowers_the_floor_is_refused_before_any_case(
    floor: None, tmp_path: Path, asked: dict[str, str], named: str
) -> None:
    marker = tmp_path / "ran.txt"
    with pytest.raises(SandboxFloorError) as caught:
        evaluate(leaves_a_mark, rows(marker), EVALUATORS, store=InMemoryStore(), **asked)
    message = str(caught.value)
    assert message.startswith(f"{named} ")
    assert "this machine's operator set OLOPROOF_SANDBOX=required" in message
    assert "which a run cannot lower" in message
    assert f"remove `{named}`" in message
    assert isinstance(caught.value, ConfigError)  # the CLI's bad input: exit 3
    assert not marker.exists()


def test_the_floor_holds_for_a_run_until_decided(floor: None, tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    with pytest.raises(SandboxFloorError, match="OLOPROOF_SANDBOX=required"):
        evaluate(
            leaves_a_mark,
            rows(marker),
            EVALUATORS,
            store=InMemoryStore(),
            sandbox="off",
            until_decided=True,
        )
    assert not marker.exists()


def test_auto_under_the_floor_means_required_and_raising_is_always_allowed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OLOPROOF_SANDBOX", "required")
    assert plan_run(system=plain, evaluators=EVALUATORS, sandbox="auto").sandbox == "required"
    assert plan_run(system=plain, evaluators=EVALUATORS).sandbox == "required"
    monkeypatch.setenv("OLOPROOF_SANDBOX", "auto")
    assert plan_run(system=plain, evaluators=EVALUATORS, sandbox="required").sandbox == "required"
    # Without the floor a run may still ask for less, as before.
    assert plan_run(system=plain, evaluators=EVALUATORS, sandbox="off").sandbox == "off"
    assert plan_run(system=plain, evaluators=EVALUATORS, isolation="thread").isolation == "thread"


@pytest.mark.skipif(
    not sandbox_support().available,
    reason=f"no sandbox on this machine: {sandbox_support().reason}",
)
def test_auto_asked_under_the_floor_runs_in_a_sandbox(floor: None, tmp_path: Path) -> None:
    result = evaluate(
        plain, rows(tmp_path / "unused"), EVALUATORS, store=InMemoryStore(), sandbox="auto"
    )
    execution = result.provenance["execution"]
    assert execution["sandbox"]["on"] is True
    assert execution["measurements"] == "protected"
    assert result.metrics[0].n_observed == 3


def test_doctor_says_the_floor_is_set(floor: None) -> None:
    assert protections().mode.startswith("required (OLOPROOF_SANDBOX): a floor no run lowers")
