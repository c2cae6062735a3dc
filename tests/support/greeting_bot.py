"""A user's support bot that greets three customers in four, and a RubricJudge that passes
the replies that greet: the project the labels journeys write into a folder of the user's.

The judge runs on the tests' OpenAI-compatible stand-in (`judge_greetings`); the files are
as docs/labels.md and the README show them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.fake_openai import FakeOpenAI, Reply

BOT = """\
from oloproof import system


@system(name="helper", version="1")
def answer(case):
    number = int(case["question"].split("#")[1].rstrip("?"))
    greeting = "Hello! " if number % 4 else ""
    return {"reply": f"{greeting}About order #{number}: it ships tomorrow."}
"""

CONFIG = """\
system: bot:answer
dataset: data/cases.jsonl
evaluators:
  - RubricJudge: {criterion: helpful, rubric: "The reply greets the customer and answers."}
"""

SIGN_IN = """\
import json, os, sys

import django

os.environ["DJANGO_SETTINGS_MODULE"] = "evalsite.settings"
django.setup()
from django.test import Client

client = Client(HTTP_HOST="localhost")
password = sys.stdin.readline().strip()
signed = client.post("/accounts/login/", {"username": USER, "password": password})
assert signed.status_code == 302, signed.status_code
"""
"""The start of a script that signs in as `USER` (set before it) with the password on stdin."""


def judge_greetings(fake_openai: FakeOpenAI) -> None:
    """The stand-in judge passes every reply that greets the customer, and fails the rest."""
    passed = json.dumps({"verdict": "PASS", "reason": "Greets the customer."})
    failed = json.dumps({"verdict": "FAIL", "reason": "No greeting."})
    fake_openai.respond_with(
        lambda request: Reply(passed if "Hello" in request.user_text else failed)
    )


def write_project(folder: Path, case_ids: list[str]) -> None:
    """The bot, its config and one question a case, about the order its id numbers."""
    (folder / "data").mkdir(parents=True)
    (folder / "bot.py").write_text(BOT, encoding="utf-8")
    (folder / "oloproof.yaml").write_text(CONFIG, encoding="utf-8")
    rows = [
        {"id": case, "input": {"question": f"Where is order #{int(case[1:])}?"}}
        for case in case_ids
    ]
    (folder / "data" / "cases.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8"
    )


def oloproof(
    folder: Path, env: dict[str, str], *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """The install's `oloproof` as the user runs it in their folder."""
    return subprocess.run(
        [str(Path(sys.executable).parent / "oloproof"), *args],
        cwd=folder,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def run_signed_in(
    folder: Path, env: dict[str, str], script: Path, password: str, *args: str
) -> subprocess.CompletedProcess[str]:
    """A script that begins with `SIGN_IN`, run in the user's folder on their store."""
    return subprocess.run(
        [sys.executable, str(script), *args],
        cwd=folder,
        env=env,
        input=password + "\n",
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
