"""People's labels imported from a file count, reading the review queue changes nothing, and
a run labelled on every case is known: the way a user gets there, from files written as
docs/labels.md shows them in a folder of theirs, with `oloproof run`, `oloproof label` and
`oloproof gate` in fresh processes and the dashboard read as a signed-in account.

The run: 40 replies judged by a RubricJudge on the tests' OpenAI-compatible stand-in
server, which passes every reply that greets the customer (30 of 40, 0.750). People
pass 20 (0.500): they fail the ten replies without a greeting and ten that greet but
answer another question, so the judge's false-pass rate is 0.5. The store is the
project's own SQLite file, or a fresh PostgreSQL database when DATABASE_URL names a
server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.journeys.conftest import user_env
from tests.support.fake_openai import FakeOpenAI
from tests.support.greeting_bot import (
    SIGN_IN,
    judge_greetings,
    oloproof,
    run_signed_in,
    write_project,
)
from tests.support.platform import Database

pytestmark = pytest.mark.slow

POLICY = """\
version: 1
rules:
  - metric: helpful
    min: 0.55
"""

READER = (
    'USER = "bob"\n'
    + SIGN_IN
    + """\
for path in sys.argv[1:]:
    response = client.get(path)
    print(json.dumps({"path": path, "status": response.status_code,
                      "body": response.content.decode()}))
"""
)

PASSWORD = "a-long-test-password"
CASES = [f"c{i:02d}" for i in range(40)]


def people_say(case_id: str) -> tuple[str, str]:
    """People's label of a case and their note: pass for half, fail for the rest."""
    number = int(case_id[1:])
    if number % 4 == 0:
        return "fail", "no greeting"
    if number % 4 == 3:
        return "fail", "answers a different question"
    return "pass", ""


def labels_file(path: Path, case_ids: list[str]) -> Path:
    """A file of labels as docs/labels.md shows it: CSV, header case_id,metric,value,note."""
    lines = ["case_id,metric,value,note"]
    lines += [f"{case},helpful,{','.join(people_say(case))}" for case in case_ids]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path, fake_openai: FakeOpenAI) -> Iterator[tuple[Path, dict[str, str]]]:
    """A user's project folder with a system, a judged metric, data and a policy, its store
    ready, and the stand-in model server as every model role's provider."""
    judge_greetings(fake_openai)
    folder = tmp_path / "my-evals"
    write_project(folder, CASES)
    (folder / "pyproject.toml").write_text('[project]\nname = "my-evals"\n', encoding="utf-8")
    (folder / "release.yaml").write_text(POLICY, encoding="utf-8")
    database = Database(folder / ".oloproof", os.environ.get("DATABASE_URL"))
    env = user_env(
        OLOPROOF_DEFAULT_MODEL="judge-model",
        OLOPROOF_DEFAULT_BASE_URL=fake_openai.base_url,
        OLOPROOF_DEFAULT_PRICE_IN="1",
        OLOPROOF_DEFAULT_PRICE_OUT="2",
        **database.env,
    )
    try:
        if database.url:  # a server database is migrated by its operator
            done = subprocess.run(
                [sys.executable, "-m", "django", "migrate", "--noinput", "-v", "0"],
                cwd=folder,
                env={**env, "DJANGO_SETTINGS_MODULE": "evalsite.settings"},
                capture_output=True,
                text=True,
                timeout=180,
                check=False,
            )
            assert done.returncode == 0, done.stderr
        yield folder, env
    finally:
        database.drop()


def shown(folder: Path, env: dict[str, str], *extra: str) -> tuple[dict[str, Any], str]:
    """`oloproof label show 1 helpful`, as JSON and as text."""
    as_text = oloproof(folder, env, "label", "show", "1", "helpful", *extra)
    assert as_text.returncode == 0, as_text.stderr
    return reported(folder, env, *extra), as_text.stdout


def reported(folder: Path, env: dict[str, str], *extra: str) -> dict[str, Any]:
    """`oloproof label show 1 helpful --json`."""
    as_json = oloproof(folder, env, "label", "show", "1", "helpful", "--json", *extra)
    assert as_json.returncode == 0, as_json.stderr
    return dict(json.loads(as_json.stdout))


def gate(folder: Path, env: dict[str, str]) -> tuple[int, str]:
    decided = oloproof(folder, env, "gate", "1", "release.yaml")
    assert decided.returncode in (0, 1, 2), decided.stderr
    return decided.returncode, decided.stdout


def read_pages(folder: Path, env: dict[str, str], reader: Path, *paths: str) -> dict[str, Any]:
    """GET each path as the signed-in account `bob`, in a fresh process on the store."""
    done = run_signed_in(folder, env, reader, PASSWORD, *paths)
    assert done.returncode == 0, done.stderr
    pages = [json.loads(line) for line in done.stdout.splitlines()]
    assert [page["status"] for page in pages] == [200] * len(paths), pages
    return {page["path"]: page["body"] for page in pages}


def test_labels_from_files_decide_the_figure_and_the_gate_and_reading_the_queue_changes_neither(
    project: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    folder, env = project
    recorded = oloproof(folder, env, "run", "oloproof.yaml")
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert "recorded run #1" in recorded.stderr
    assert "helpful  0.750" in recorded.stdout
    made = oloproof(folder, env, "user", "create", "bob", "--password-stdin", stdin=PASSWORD)
    assert made.returncode == 0, made.stderr
    reader = tmp_path / "read_pages.py"
    reader.write_text(READER, encoding="utf-8")

    # Three quarters of the cases labelled from a file, before anyone opens the queue.
    labels_file(folder / "labels.csv", CASES[:30])
    imported = oloproof(folder, env, "label", "import", "labels.csv", "--run", "1")
    assert "30 labels saved from labels.csv for run #1" in imported.stdout, imported.stderr
    before, text = shown(folder, env)
    assert before["labelled_cases"] == 30
    decided = gate(folder, env)

    # Reading the queue (its page, blind, a skip, the API, the metric page) writes nothing.
    queue_page, queue_api = "/runs/1/review/helpful/", "/api/runs/1/review/helpful/next"
    pages = read_pages(
        folder,
        env,
        reader,
        queue_page,
        queue_page + "?blind=1",
        queue_page + "?after=0",
        queue_api,
        queue_api + "?after=0",
        "/runs/1/metrics/helpful/",
        "/runs/1/",
    )
    assert shown(folder, env) == (before, text), "reading the queue changed the figure"
    assert gate(folder, env) == decided, "reading the queue changed the gate"
    queue = json.loads(pages[queue_api])
    assert json.loads(pages[queue_api + "?after=0"])["position"] > 0

    # The rest labelled from a second file: every case is, and the figure is the people's.
    labels_file(folder / "rest.csv", CASES[30:])
    imported = oloproof(folder, env, "label", "import", "rest.csv", "--run", "1")
    assert "10 labels saved from rest.csv for run #1" in imported.stdout, imported.stderr
    after, after_text = shown(folder, env)
    known = after["labelled"]
    assert known is not None, after_text
    assert known["known"] is True
    assert (known["estimate"], known["interval"]) == (0.5, {"lower": 0.5, "upper": 0.5})
    assert (known["n_labels"], known["cases_left"], after["labels_needed"]) == (40, 0, None)
    assert after["calibration"]["false_pass_rate"]["value"] == 0.5
    assert "with labels:  0.5  [0.5, 0.5]  known: people labelled all 40 cases" in after_text
    assert "no labelled draws yet" not in after_text
    assert "no case is left to label: no interval is left to narrow" in after_text
    assert "more labelled draws" not in after_text
    assert reported(folder, env, "--width", "0.01")["labels_needed"] == 0
    code, out = gate(folder, env)
    assert code == 1, out
    assert "people's labels of every case" in out
    assert "[0.500, 0.500], is below 0.55" in out
    pages = read_pages(folder, env, reader, queue_page, queue_api, "/runs/1/metrics/helpful/")
    assert "People labelled all 40 cases: the figure is theirs, exact" in pages[queue_page]
    assert 'id="progress-needed">none: known<' in pages[queue_page]
    assert "Known from people's labels" in pages["/runs/1/metrics/helpful/"]
    done = json.loads(pages[queue_api])
    assert (done["case_id"], done["known"], done["labels_needed"]) == (None, True, None)
    assert reported(folder, env) == after
    assert gate(folder, env) == (code, out)

    # Back to the run with ten cases left: the queue asked for one of those ten, its
    # labelled draws counted wherever they came from, and no readout asked for more
    # labels than the ten.
    assert queue["case_id"] in CASES[30:]
    assert queue["labelled"] == before["labelled"]
    labelled = before["labelled"]
    if labelled is None:  # the queue's first draw was a case nobody had labelled
        assert before["next_case"] == queue["case_id"]
        assert f"(label {queue['case_id']}, the queue's first draw)" in text
    else:
        assert labelled["n_labels"] >= 1
        assert labelled["cases_left"] == 10
        assert before["labels_needed"] is None or before["labels_needed"] <= 10
        assert "(10 cases left to label)" in text or "labels alone cannot" in text
    more = [line for line in decided[1].splitlines() if "more labels" in line]
    assert all("(10 cases left to label)" in line for line in more), more
