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
from tests.support.fake_openai import FakeOpenAI, Reply, Request

N_CASES = 120
SYSTEM = """\
from oloproof import system
from oloproof.models import complete


@system(name="labeller", version="1")
def answer(case):
    return {"label": complete(case["question"]).strip()}
"""
CONFIG = """\
system: labeller:answer
dataset: data/cases.jsonl
evaluators:
  - ExactMatch: {criterion: exact_label, field: label}
policy: release.yaml
"""
POLICIES = {
    "release.yaml": """\
version: 1
rules:
  - metric: latency_p95_ms
    max: 60000
  - metric: cost_per_success_usd
    max: 0.02
    cap_usd: 0.05
""",
    "tight.yaml": """\
version: 1
rules:
  - metric: latency_p50_ms
    max: 0.01
  - metric: cost_per_case_usd
    max: 0.005
    cap_usd: 0.05
""",
    "close.yaml": """\
version: 1
rules:
  - metric: latency_p95_ms
    max: 60000
  - metric: cost_per_success_usd
    max: 0.0115
    cap_usd: 0.05
""",
    "uncapped.yaml": """\
version: 1
rules:
  - metric: latency_p95_ms
    max: 60000
  - metric: cost_per_success_usd
    max: 0.02
""",
}


def labelled(request: Request) -> Reply:
    """The label the question asks for, except on every tenth case: 90 % right."""
    number, label = re.findall(r"question (\d+): say (\w+)", request.user_text)[0]
    return Reply("other" if int(number) % 10 == 0 else label, prompt_tokens=10)


@pytest.fixture
def project(tmp_path: Path, fake_openai: FakeOpenAI) -> Path:
    folder = tmp_path / "latency-cost"
    (folder / "data").mkdir(parents=True)
    assert REPO not in folder.parents
    rows = [
        {"id": f"q{i:03d}", "input": {"question": f"question {i}: say {label}"},
         "expected": {"label": label}}
        for i, label in ((i, "refund" if i % 2 else "shipping") for i in range(N_CASES))
    ]  # fmt: skip
    (folder / "data" / "cases.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (folder / "labeller.py").write_text(SYSTEM)
    (folder / "oloproof.yaml").write_text(CONFIG)
    for name, text in POLICIES.items():
        (folder / name).write_text(text)
    fake_openai.respond_with(labelled)
    return folder


def run(folder: Path, server: FakeOpenAI, *args: str) -> tuple[int, str]:
    done = run_user(
        ["oloproof", *args],
        folder,
        timeout=300,
        OLOPROOF_SYSTEM_MODEL="stand-in",
        OLOPROOF_SYSTEM_BASE_URL=server.base_url,
        OLOPROOF_SYSTEM_PRICE_IN="1000",
        OLOPROOF_SYSTEM_PRICE_OUT="0",
        OLOPROOF_DEFAULT_BACKOFF="0.01",
    )
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
