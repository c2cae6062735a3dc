"""`oloproof compare` and `oloproof gate`: output and exit codes for CI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oloproof.cli import main
from tests.support.synthetic_runs import make_run, pass_fail


@pytest.fixture
def results(tmp_path: Path) -> Path:
    make_run({"exact_label": pass_fail(500, 0)}, system=("bot", "1"), run_id="r1").to_json(
        str(tmp_path / "v1.json")
    )
    make_run({"exact_label": pass_fail(400, 100)}, system=("bot", "2"), run_id="r2").to_json(
        str(tmp_path / "v2.json")
    )
    make_run({"exact_label": pass_fail(30, 0)}, system=("bot", "3")).to_json(
        str(tmp_path / "small.json")
    )
    return tmp_path


def policy(tmp_path: Path, text: str) -> str:
    path = tmp_path / "release.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_compare_prints_a_table_and_json(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(results / "v1.json"), str(results / "v2.json")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("bot@2 (run r2) vs bot@1 (run r1): 500 cases")
    assert "exact_label" in out
    assert "-0.200" in out
    assert main(["compare", str(results / "v1.json"), str(results / "v2.json"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["metrics"][0]["regressed"]) == 100


def test_compare_bad_input_exits_3(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(results / "v1.json"), str(results / "nope.json")]) == 3
    assert "cannot read result file" in capsys.readouterr().err
    assert (
        main(["compare", str(results / "v1.json"), str(results / "v2.json"), "--confidence", "95"])
        == 3
    )


@pytest.mark.parametrize(
    ("result", "rules", "code", "verdict"),
    [
        ("v1.json", "  - metric: exact_label\n    min: 0.9\n", 0, "gate PASS"),
        ("v2.json", "  - metric: exact_label\n    min: 0.9\n", 1, "gate FAIL"),
        ("small.json", "  - metric: exact_label\n    min: 0.9\n", 2, "gate INCONCLUSIVE"),
    ],
)
def test_gate_exit_codes(
    results: Path,
    capsys: pytest.CaptureFixture[str],
    result: str,
    rules: str,
    code: int,
    verdict: str,
) -> None:
    path = policy(results, f"version: 1\nrules:\n{rules}")
    assert main(["gate", str(results / result), path]) == code
    out = capsys.readouterr().out
    assert out.startswith(verdict)
    assert "The whole" in out or "straddles" in out


def test_gate_with_a_baseline_and_json(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = policy(
        results,
        "version: 1\nbaseline: {run: v1.json}\nrules:\n"
        "  - metric: exact_label\n    no_regression: {margin: 0.02}\n",
    )
    assert main(["gate", str(results / "v2.json"), path, "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["rules"][0]["figures"]["regressed"] == 100
    # --baseline overrides the policy's baseline: the run against itself passes.
    assert (
        main(["gate", str(results / "v2.json"), path, "--baseline", str(results / "v2.json")]) == 0
    )


def test_gate_bad_policy_exits_3_with_the_line(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = policy(results, "version: 1\nrules:\n  - metric: exact_label\n    mni: 0.9\n")
    assert main(["gate", str(results / "v1.json"), path]) == 3
    assert f"{path}:4: rules[0].mni: unknown key 'mni'" in capsys.readouterr().err
    path = policy(results, "version: 1\nrules:\n  - metric: exact_labl\n    min: 0.9\n")
    assert main(["gate", str(results / "v1.json"), path]) == 3
    assert "unknown metric 'exact_labl'" in capsys.readouterr().err
