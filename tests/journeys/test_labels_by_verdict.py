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
from pathlib import Path

import pytest

from oloproof_core.stats import clopper_pearson
from tests.journeys.conftest import user_env
from tests.support.fake_openai import FakeOpenAI
from tests.support.greeting_bot import (
    SIGN_IN,
    judge_greetings,
    oloproof,
    run_signed_in,
    write_project,
)

pytestmark = pytest.mark.slow

LABELLER = (
    'USER = "lea"\n'
    + SIGN_IN
    + """\
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
)

PASSWORD = "a-long-test-password"
CASES = 300


def test_labels_beside_a_pass_fail_judge_give_an_interval_well_inside_the_labels_alone(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    judge_greetings(fake_openai)
    folder = tmp_path / "my-evals"
    write_project(folder, [f"c{i:03d}" for i in range(CASES)])
    env = user_env(
        OLOPROOF_DEFAULT_MODEL="judge-model", OLOPROOF_DEFAULT_BASE_URL=fake_openai.base_url
    )
    recorded = oloproof(folder, env, "run", "oloproof.yaml")
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert "helpful  0.750" in recorded.stdout
    made = oloproof(folder, env, "user", "create", "lea", "--password-stdin", stdin=PASSWORD)
    assert made.returncode == 0, made.stderr

    labeller = tmp_path / "label_the_queue.py"
    labeller.write_text(LABELLER, encoding="utf-8")
    labelled = run_signed_in(folder, env, labeller, PASSWORD, "120")
    assert labelled.returncode == 0, labelled.stderr
    assert json.loads(labelled.stdout)["draws_labelled"] >= 120

    shown = oloproof(folder, env, "label", "show", "1", "helpful", "--json")
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
    as_text = oloproof(folder, env, "label", "show", "1", "helpful")
    assert as_text.returncode == 0, as_text.stderr
    # n: the draws up to the first one still unlabelled, past the 120 labelled by request
    # when the following draws land on cases labelled already.
    assert f"from {n} labelled draws, split by the judge's two verdicts" in as_text.stdout
