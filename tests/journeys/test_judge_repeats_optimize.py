"""`judge_repeats: 3` in an optimization config, from a user's folder: `oloproof optimize`
asks the model judge three times about every output it judges, in the search and in the
proof on test, and the runs it records on test carry the judge's variance split."""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path

from tests.journeys.conftest import optimize_in_folder
from tests.support.fake_openai import FakeOpenAI, Reply, Request
from tests.support.optimize_task import model_environment, responder, write_project
from tests.support.wavering_judge import JUDGE_MODEL, judge_environment

STORE_REPORT = """
import json
from oloproof.cli._django import django_ready

django_ready()
from runs.models import Optimization

optimization = Optimization.objects.get()
runs = [optimization.seed_test_run, optimization.winner_test_run]
print(json.dumps([run.provenance.get("judge_repeats") for run in runs]))
"""


class JudgeOrTask:
    """The task and reflection models of the example, and a judge that counts the times it
    is asked about each text (an input and an output)."""

    def __init__(self) -> None:
        self.asked: Counter[str] = Counter()
        self.lock = threading.Lock()

    def __call__(self, request: Request) -> Reply:
        if request.model != JUDGE_MODEL:
            return responder(request)
        with self.lock:
            self.asked[request.user_text] += 1
        return Reply(json.dumps({"verdict": "PASS", "reason": "polite enough"}))


def test_an_optimization_asks_its_model_judge_three_times_an_output(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    folder = tmp_path / "calc-opt"
    rubric = {"RubricJudge": {"criterion": "polite", "rubric": "The answer is polite."}}
    write_project(
        folder,
        engine="auto",
        extra={
            "evaluators": ["exact.py", rubric],
            "objective": "exact",
            "judge_repeats": 3,
            "concurrency": 2,
        },
    )
    judge = JudgeOrTask()
    fake_openai.respond_with(judge)

    outcome, test_runs = optimize_in_folder(
        folder,
        STORE_REPORT,
        **judge_environment(fake_openai) | model_environment(fake_openai.base_url),
    )
    proved = {outcome["proof"]["seed"]["test"]["n"], outcome["proof"]["winner"]["test"]["n"]}
    (test_cases,) = proved
    proof = outcome["proof"]
    runs_on_test = 1 if proof["winner"]["candidate"] == proof["seed"]["candidate"] else 2
    # Every output judged, in the search and on test, three times: no more (the verdict
    # cache keys on each judge repeat, so an output seen again is not asked again), no less.
    assert set(judge.asked.values()) == {3}
    assert (
        runs_on_test * test_cases
        < len(judge.asked)
        <= (outcome["evaluations"]["run"] + runs_on_test * test_cases)
    )
    for figures in test_runs:  # the seed's and the winner's run on test
        assert figures["judge_repeats"] == 3
        assert [split["metric"] for split in figures["metrics"]] == ["polite"]
        assert figures["metrics"][0]["outputs"] == test_cases
