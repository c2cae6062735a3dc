"""The optimization task the tests and the bench share, served by the fake OpenAI server.

The task model ("task-model") answers "What is a + b?" with the bare number only when
its system prompt carries the instruction "Answer with the number only."; otherwise it
answers in a sentence, which the metric scores 0 with feedback that says so. The
reflection model ("reflect-model") proposes that instruction once the feedback it is
shown asks for the number only. Each engine can therefore find the winner in one
reflection, and a search that never reflects (or never sees feedback) cannot.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

from tests.support.fake_openai import FakeOpenAI, Reply, Request

INSTRUCTION = "Answer with the number only."
SEED_PROMPT = "You are a calculator."
TASK_MODEL = "task-model"
REFLECT_MODEL = "reflect-model"

SYSTEM_FILE = f"""\
from oloproof import component, system
from oloproof.models import complete


@system(name="calc", version="1", components={{"system_prompt": {SEED_PROMPT!r}}})
def answer(case):
    return {{"answer": complete(case["question"], instructions=component("system_prompt"))}}
"""
METRIC_FILE = """\
def score(input, output, expected=None):
    want = expected["answer"]
    got = output.get("answer") if isinstance(output, dict) else output
    if str(got).strip() == want:
        return 1.0, {"feedback": "Correct.", "scores": {"format": 1.0}}
    return 0.0, {
        "feedback": f"Expected exactly {want!r}, got {got!r}. Reply with the number only.",
        "scores": {"format": 0.0},
    }
"""
POLICY_FILE = """\
version: 1
rules:
  - metric: exact
    min: 0.5
"""


def rows(n: int = 24) -> list[dict[str, Any]]:
    return [
        {
            "id": f"q{i:02d}",
            "input": {"question": f"What is {i} + {i % 5 + 2}?"},
            "expected": {"answer": str(i + i % 5 + 2)},
        }
        for i in range(n)
    ]


def write_project(
    folder: Path,
    *,
    budget: dict[str, Any] | None = None,
    engine: str = "gepa",
    n: int = 24,
    extra: dict[str, Any] | None = None,
) -> Path:
    """A project folder: calc.py, exact.py, cases.jsonl, release.yaml, optimize.yaml."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "calc.py").write_text(SYSTEM_FILE, encoding="utf-8")
    (folder / "exact.py").write_text(METRIC_FILE, encoding="utf-8")
    (folder / "release.yaml").write_text(POLICY_FILE, encoding="utf-8")
    with (folder / "cases.jsonl").open("w", encoding="utf-8") as handle:
        for row in rows(n):
            handle.write(json.dumps(row) + "\n")
    config = {
        "system": "calc.py:answer",
        "dataset": "cases.jsonl",
        "evaluators": ["exact.py"],
        "engine": engine,
        "budget": budget or {"metric_calls": 120},
        "policy": "release.yaml",
        "concurrency": 4,
        **(extra or {}),
    }
    (folder / "optimize.yaml").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return folder / "optimize.yaml"


_QUESTION = re.compile(r"What is (\d+) \+ (\d+)\?")


def _task_reply(request: Request) -> Reply:
    found = _QUESTION.search(request.user_text)
    total = int(found.group(1)) + int(found.group(2)) if found else 0
    dspy_format = "[[ ## answer ## ]]" in request.system_text
    if dspy_format:
        body = str(total) if INSTRUCTION in request.system_text else f"The answer is {total}."
        return Reply(f"[[ ## answer ## ]]\n{body}\n\n[[ ## completed ## ]]")
    if INSTRUCTION in request.system_text:
        return Reply(str(total))
    return Reply(f"The answer is {total}.")


def _reflection_reply(request: Request) -> Reply:
    if "number only" in request.user_text:
        return Reply(
            f"```\n{SEED_PROMPT} {INSTRUCTION}\n```", prompt_tokens=400, completion_tokens=20
        )
    return Reply("```\nYou are a careful calculator.\n```", prompt_tokens=400, completion_tokens=20)


def responder(request: Request) -> Reply:
    if request.model == REFLECT_MODEL:
        return _reflection_reply(request)
    return _task_reply(request)


def serve_task(server: FakeOpenAI) -> None:
    server.respond_with(responder)


def model_environment(base_url: str) -> dict[str, str]:
    """The environment that points the system and reflection roles at the fake server."""
    return {
        "OLOPROOF_SYSTEM_MODEL": TASK_MODEL,
        "OLOPROOF_SYSTEM_BASE_URL": base_url,
        "OLOPROOF_SYSTEM_PRICE_IN": "1",
        "OLOPROOF_SYSTEM_PRICE_OUT": "2",
        "OLOPROOF_REFLECTION_MODEL": REFLECT_MODEL,
        "OLOPROOF_REFLECTION_BASE_URL": base_url,
        "OLOPROOF_REFLECTION_PRICE_IN": "3",
        "OLOPROOF_REFLECTION_PRICE_OUT": "6",
        "OLOPROOF_DEFAULT_BACKOFF": "0.01",
    }


def dspy_program_file() -> str:
    return textwrap.dedent(f"""\
        import dspy

        program = dspy.Predict(dspy.Signature("question -> answer", {SEED_PROMPT!r}))
        """)
