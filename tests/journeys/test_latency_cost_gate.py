"""Latency and cost rules from a user's folder: one `oloproof run` with a release policy,
then `oloproof gate` on its result with stricter policies, each deciding its own way.

The system asks a model (the stand-in OpenAI-compatible server) for each label; the
platform meters every call at $1,000 per million input tokens, so each case costs
exactly $0.01 whatever the system does, and nine cases in ten get the right label.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.journeys.conftest import REPO, run_user
from tests.support.fake_openai import FakeOpenAI
from tests.support.priced_project import (
    CONFIG,
    N_CASES,
    labelled,
    priced_model_env,
    write_priced_project,
)


@pytest.fixture
def project(tmp_path: Path, fake_openai: FakeOpenAI) -> Path:
    folder = write_priced_project(tmp_path / "latency-cost")
    assert REPO not in folder.parents
    fake_openai.respond_with(labelled)
    return folder


def run(folder: Path, server: FakeOpenAI, *args: str) -> tuple[int, str]:
    done = run_user(["oloproof", *args], folder, timeout=300, **priced_model_env(server))
    return done.returncode, done.stdout + done.stderr


def test_latency_and_cost_rules_pass_fail_and_stay_inconclusive(
    project: Path, fake_openai: FakeOpenAI
) -> None:
    code, said = run(project, fake_openai, "run", "oloproof.yaml", "--json", "result.json")
    assert code == 0, said
    assert fake_openai.request_count == N_CASES
    assert "latency and cost (measured by oloproof, 95% intervals):" in said
    assert "cost_per_case_usd: $0.010000 [" in said
    assert re.search(r"cost_per_success_usd: \$0\.011111 \[\$0\.0\d+, \$0\.0\d+\]", said), said
    assert "gate PASS" in said
    measured = {
        item["metric"]: item
        for item in json.loads((project / "result.json").read_text())["measured"]
    }
    assert measured["cost_per_success_usd"]["estimate"] == pytest.approx(0.01 / 0.9)
    assert measured["cost_per_success_usd"]["interval"]["upper"] < 0.02  # the policy's cap holds
    assert measured["latency_p95_ms"]["n_observed"] == N_CASES

    code, said = run(project, fake_openai, "gate", "result.json", "tight.yaml")
    assert code == 1, said
    assert re.search(r"latency_p50_ms ≤ 0\.01 fail", said), said
    assert re.search(r"cost_per_case_usd ≤ 0\.005 fail", said), said

    for recorded in ("result.json", "1"):  # the file, and the run in the folder's store
        code, said = run(project, fake_openai, "gate", recorded, "close.yaml")
        assert code == 2, said
        assert "latency_p95_ms ≤ 60000 pass" in said
        assert re.search(
            r"cost_per_success_usd ≤ 0\.0115 inconclusive \(interval [\d.]+–[\d.]+ straddles", said
        ), said


def test_a_cost_rule_without_a_cap_is_refused_before_any_case_runs(
    project: Path, fake_openai: FakeOpenAI
) -> None:
    (project / "oloproof.yaml").write_text(CONFIG.replace("release.yaml", "uncapped.yaml"))
    code, said = run(project, fake_openai, "run", "oloproof.yaml")
    assert code == 3, said
    assert "uncapped.yaml:5: rules[1]: cost_per_success_usd needs cap_usd" in said
    assert fake_openai.request_count == 0


def test_a_sequential_run_refuses_latency_rules_before_any_case_runs(
    project: Path, fake_openai: FakeOpenAI
) -> None:
    code, said = run(project, fake_openai, "run", "oloproof.yaml", "--until-decided")
    assert code == 3, said
    assert "release.yaml:3: rules[0]: latency_p95_ms is decided on a fixed number of cases" in said
    assert fake_openai.request_count == 0


SHOW = """\
import json

import oloproof

print(oloproof.load("result.json"))
data = json.load(open("result.json"))
del data["cases"]
json.dump(data, open("figures-only.json", "w"))
print("--- without its cases ---")
print(oloproof.load("figures-only.json"))
"""


def test_a_result_file_read_back_shows_the_figures_of_the_run_with_or_without_its_cases(
    project: Path, fake_openai: FakeOpenAI
) -> None:
    code, said = run(project, fake_openai, "run", "oloproof.yaml", "--json", "result.json")
    assert code == 0, said
    block = said[said.index("latency and cost (measured by oloproof") :].split("\n\n")[0]
    assert "cost_per_success_usd: $0.011111 [" in block

    (project / "show.py").write_text(SHOW)
    shown = run_user(["python", "show.py"], project, timeout=120)
    assert shown.returncode == 0, shown.stderr
    with_cases, without = shown.stdout.split("--- without its cases ---")
    assert block in with_cases
    assert block in without
