"""The pytest plugin in a real pytest run (pytester): gates asserted with a readout, a gate's
truth value refused, runs marked as the tests' and kept out of the approval queue."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from tests.faces.conftest import REPO, clean_env, python, write_project

pytest_plugins = ("pytester",)

USER_TESTS = """
import pytest

from oloproof import evaluate, system
from oloproof.evaluators import ExactMatch
from bot import answer


@system(name="bot", version="broken")
def broken(case):
    raise RuntimeError("backend down")


EVALUATORS = [ExactMatch(criterion="exact_label", field="label")]
PASSING = {"version": 1, "rules": [{"metric": "exact_label", "min": 0.5}]}
FAILING = {"version": 1, "rules": [{"missing": {"max_count": 0}}]}


def test_passing_gate(assert_gate):
    assert_gate(evaluate(answer, "data/cases.jsonl", EVALUATORS, policy=PASSING))


def test_failing_gate(assert_gate):
    assert_gate(evaluate(broken, "data/cases.jsonl", EVALUATORS, policy=FAILING))


def test_truthiness_of_a_failed_gate():
    result = evaluate(broken, "data/cases.jsonl", EVALUATORS, policy=FAILING)
    assert result.gate


@pytest.mark.oloproof(queue_approval=True)
def test_asks_for_approval():
    evaluate(answer, "data/cases.jsonl", EVALUATORS, policy=PASSING)
"""


def test_the_plugin_is_registered_as_a_pytest_entry_point() -> None:
    with (REPO / "pyproject.toml").open("rb") as handle:
        project = tomllib.load(handle)["project"]
    assert project["entry-points"]["pytest11"] == {"oloproof": "oloproof.pytest_plugin"}


def test_a_user_test_suite_with_the_plugin(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_project(pytester.path)
    pytester.makepyfile(test_release=USER_TESTS)
    data = pytester.path / "store"
    for key in list(os.environ):
        if key.startswith(("OLOPROOF_", "DJANGO_", "DATABASE_URL")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("OLOPROOF_RECORD", "1")
    monkeypatch.setenv("OLOPROOF_DATA_DIR", str(data))
    monkeypatch.setenv("PYTHONPATH", f"{REPO}{os.pathsep}{pytester.path}")
    # pytester makes the project folder HOME, and a sandbox never binds a home folder.
    (pytester.path / "home").mkdir()
    monkeypatch.setenv("HOME", str(pytester.path / "home"))

    # Loaded by name whether or not the entry point is installed in this environment.
    run = pytester.runpytest_subprocess(
        "-p", "no:oloproof", "-p", "oloproof.pytest_plugin", "-p", "no:cacheprovider"
    )

    run.assert_outcomes(passed=2, failed=2)
    output = run.stdout.str()
    assert "gate FAIL: missing ≤ 0 fail" in output  # the readout, on failure
    assert "run: http://127.0.0.1:8000/runs/2/" in output
    assert "a gate has no truth value (this one is fail)" in output

    recorded = python(
        """
        from oloproof._platform import django_setup
        django_setup()
        from runs.models import Run
        from runs.access import LOCAL
        from runs.selectors.gates import gates_pending
        for run in Run.objects.order_by("id"):
            origin = run.provenance["origin"]
            print(run.pk, origin["kind"], origin["test"], origin["queue_approval"])
        print("pending", [gate.run_id for gate in gates_pending(user=LOCAL)])
        """,
        cwd=pytester.path,
        env=clean_env(OLOPROOF_DATA_DIR=str(data)),
    )
    assert recorded.splitlines() == [
        "1 test test_release.py::test_passing_gate False",
        "2 test test_release.py::test_failing_gate False",
        "3 test test_release.py::test_truthiness_of_a_failed_gate False",
        "4 test test_release.py::test_asks_for_approval True",
        "pending [4]",
    ]


def test_assert_gate_outside_pytest_reads_a_recorded_gate(tmp_path: Path) -> None:
    from oloproof.testing import assert_gate, gate_readout

    recorded = {
        "outcome": "inconclusive",
        "summary": "gate INCONCLUSIVE: x",
        "rules": [{"outcome": "inconclusive", "rule": "exact_label ≥ 0.9", "reason": "straddles"}],
    }
    from oloproof_core import Result

    result = Result(metrics=[], cases=[], provenance={}, extras={"gate": recorded})
    assert "inconclusive exact_label ≥ 0.9: straddles" in " ".join(gate_readout(recorded).split())
    with pytest.raises(AssertionError, match="gate INCONCLUSIVE"):
        assert_gate(result)
    assert assert_gate(result, allow_inconclusive=True) is recorded
    with pytest.raises(AssertionError, match="no gate"):
        assert_gate(Result(metrics=[], cases=[], provenance={}))
