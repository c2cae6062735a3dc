"""A priced labelling project for the latency and cost figures and rules: a system that
asks the stand-in model for each label through the metering gateway ($1,000 per million
input tokens, ten tokens a case: exactly $0.01), nine cases in ten right, and policies
that pass, fail and stay inconclusive on its figures."""

from __future__ import annotations

import json
import re
from pathlib import Path

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


def write_priced_project(folder: Path) -> Path:
    """The project's files in `folder`: the system, the cases, the config and policies."""
    (folder / "data").mkdir(parents=True)
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
    return folder


def priced_model_env(server: FakeOpenAI) -> dict[str, str]:
    """The system role pointed at the stand-in server, at the project's price."""
    return {
        "OLOPROOF_SYSTEM_MODEL": "stand-in",
        "OLOPROOF_SYSTEM_BASE_URL": server.base_url,
        "OLOPROOF_SYSTEM_PRICE_IN": "1000",
        "OLOPROOF_SYSTEM_PRICE_OUT": "0",
        "OLOPROOF_DEFAULT_BACKOFF": "0.01",
    }
