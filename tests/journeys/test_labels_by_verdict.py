"""A hundred and more labels beside a pass/fail judge: the interval within its two verdicts.

The way a user gets there: `oloproof run` from their folder, 300 support replies judged by
a RubricJudge on the tests' OpenAI-compatible stand-in (it passes every reply that greets
the customer: 225 of 300); an account made with `oloproof user create` labels the review
queue's draws over the REST API, one request for the next draw and one for its label, as
a labelling script would; then `oloproof label show` reads the figure. People fail every
reply without a greeting and one greeting reply in fifteen: the judge agrees with them on
95 % of cases and errs one way only, where splitting the labels by its verdict pays most.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from oloproof_core.stats import clopper_pearson
from tests.journeys.conftest import user_env
from tests.support.fake_openai import FakeOpenAI, Reply

pytestmark = pytest.mark.slow

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

LABELLER = """\
import json, os, sys

import django

os.environ["DJANGO_SETTINGS_MODULE"] = "evalsite.settings"
django.setup()
from django.test import Client

client = Client(HTTP_HOST="localhost")
password = sys.stdin.readline().strip()
signed = client.post("/accounts/login/", {"username": "lea", "password": password})
assert signed.status_code == 302, signed.status_code
wanted = int(sys.argv[1])
while True:
    queue = client.get("/api/runs/1/review/helpful/next").json()
    if queue["draws_labelled"] >= wanted or queue["case_id"] is None:
        break
    number = int(queue["case_id"][1:])
    value = "pass" if number % 4 and number % 15 != 1 else "fail"
    saved = client.post(
        "/api/runs/1/labels",
        {"case_id": queue["case_id"], "metric": "helpful", "value": value},
        content_type="application/json",
    )
    assert saved.status_code == 200, saved.content
print(json.dumps(queue))
"""

PASSWORD = "a-long-test-password"
CASES = 300


def _oloproof(folder: Path, env: dict[str, str], *args: str, stdin: str | None = None):
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


def test_labels_beside_a_pass_fail_judge_give_an_interval_well_inside_the_labels_alone(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    passed = json.dumps({"verdict": "PASS", "reason": "Greets the customer."})
    failed = json.dumps({"verdict": "FAIL", "reason": "No greeting."})
    fake_openai.respond_with(
        lambda request: Reply(passed if "Hello" in request.user_text else failed)
    )
    folder = tmp_path / "my-evals"
    (folder / "data").mkdir(parents=True)
    (folder / "bot.py").write_text(BOT, encoding="utf-8")
    (folder / "oloproof.yaml").write_text(CONFIG, encoding="utf-8")
    rows = [
        {"id": f"c{i:03d}", "input": {"question": f"Where is order #{i}?"}} for i in range(CASES)
    ]
    (folder / "data" / "cases.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8"
    )
    env = user_env(
        OLOPROOF_DEFAULT_MODEL="judge-model", OLOPROOF_DEFAULT_BASE_URL=fake_openai.base_url
    )
    recorded = _oloproof(folder, env, "run", "oloproof.yaml")
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert "helpful  0.750" in recorded.stdout
    made = _oloproof(folder, env, "user", "create", "lea", "--password-stdin", stdin=PASSWORD)
    assert made.returncode == 0, made.stderr

    labeller = tmp_path / "label_the_queue.py"
    labeller.write_text(LABELLER, encoding="utf-8")
    labelled = subprocess.run(
        [sys.executable, str(labeller), "120"],
        cwd=folder,
        env=env,
        input=PASSWORD + "\n",
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert labelled.returncode == 0, labelled.stderr
    assert json.loads(labelled.stdout)["draws_labelled"] >= 120

    shown = _oloproof(folder, env, "label", "show", "1", "helpful", "--json")
    assert shown.returncode == 0, shown.stderr
    figure = json.loads(shown.stdout)["labelled"]
    n = figure["n_labels"]
    lower, upper = figure["interval"]["lower"], figure["interval"]["upper"]
    assert n >= 120
    assert not figure["known"]
    assert lower <= figure["estimate"] <= upper
    # The judge's verdicts split the labels into a stratum people pass at 0.93 and one
    # they never pass: the interval is well inside Clopper-Pearson's on the labels alone.
    assert figure["by_verdict"] is True, figure["method"]
    alone = clopper_pearson(round(figure["estimate"] * n), n)
    assert upper - lower < 0.75 * alone.width, (figure, alone)
    as_text = _oloproof(folder, env, "label", "show", "1", "helpful")
    assert as_text.returncode == 0, as_text.stderr
    assert "from 120 labelled draws, split by the judge's two verdicts" in as_text.stdout
