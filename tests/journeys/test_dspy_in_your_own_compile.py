"""`oloproof.dspy` in a user's own DSPy script: the metric page's metrics, verbatim, as the
metric of `dspy.Evaluate` and `dspy.GEPA`, the program's model served by the local
OpenAI-compatible server. A one-field program's value is the metric's `output`, a
`REWARD_SPEC` metric scores the program's measured time and cost, and GEPA keeps the
metric's sub-scores as its objective scores."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.journeys.conftest import run_user
from tests.support.fake_openai import FakeOpenAI, Reply, Request

pytest.importorskip("dspy")

INSTRUCTION = "Answer with the number only."
EXACT = """\
def score(input, output, expected=None):
    want = expected["label"]
    if output == want:
        return 1.0, {"feedback": "Correct."}
    return 0.0, {"feedback": f"Expected {want!r}, got {output!r}."}
"""
REWARDED = """\
from skynet import reward

REWARD_SPEC = {
    "weights": {"accuracy": 0.7, "speed": 0.2, "cost": 0.1},
    "accuracy": {},
    "speed": {"reference": 2000},
    "cost": {"reference": 0.01},
}


def score(input, output, expected=None):
    ok = output == expected["label"]
    return reward(REWARD_SPEC, 1.0 if ok else 0.0, "Correct." if ok else "Wrong label.")
"""
SCRIPT = f"""\
import json, os

import dspy
from oloproof.dspy import dspy_examples, dspy_metric

base = os.environ["MODELS_URL"]
dspy.configure(lm=dspy.LM("openai/task-model", api_base=base, api_key="none", cache=False))
rows = [
    {{"id": f"q{{i}}", "input": {{"question": f"What is {{i}} + 2?"}},
      "expected": {{"label": str(i + 2)}}}}
    for i in range(8)
]
examples = dspy_examples(rows)
told = dspy.Predict(dspy.Signature("question -> label", {INSTRUCTION!r}))
exact = dspy.Evaluate(devset=examples, metric=dspy_metric("exact.py"), num_threads=1)(told)
rewarded = dspy_metric("rewarded.py")
one = rewarded(examples[0], told(**examples[0].inputs()))
seed = dspy.Predict(dspy.Signature("question -> label", "You are a calculator."))
compiled = dspy.GEPA(
    metric=rewarded,
    max_metric_calls=24,
    reflection_lm=dspy.LM("openai/reflect-model", api_base=base, api_key="none", cache=False),
    track_stats=True,
    num_threads=1,
).compile(seed, trainset=examples[:4], valset=examples[4:])
print("REPORT " + json.dumps({{
    "exact": exact.score,
    "one": {{"score": float(one), "scores": dict(one.objective_scores), "feedback": one.feedback}},
    "subscores": compiled.detailed_results.val_aggregate_subscores,
}}))
"""
_QUESTION = re.compile(r"What is (\d+) \+ (\d+)\?")


def _reply(request: Request) -> Reply:
    if request.model == "reflect-model":
        return Reply(f"```\nYou are a calculator. {INSTRUCTION}\n```")
    found = _QUESTION.search(request.user_text)
    total = int(found.group(1)) + int(found.group(2)) if found else 0
    body = str(total) if INSTRUCTION in request.system_text else f"The answer is {total}."
    return Reply(f"[[ ## label ## ]]\n{body}\n\n[[ ## completed ## ]]")


def test_the_metric_pages_metrics_work_verbatim_in_a_users_dspy_compile(
    user_folder: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.respond_with(_reply)
    (user_folder / "exact.py").write_text(EXACT, encoding="utf-8")
    (user_folder / "rewarded.py").write_text(REWARDED, encoding="utf-8")
    (user_folder / "tune.py").write_text(SCRIPT, encoding="utf-8")

    done = run_user(
        ["python", "tune.py"],
        user_folder,
        timeout=300,
        MODELS_URL=fake_openai.base_url,
        OLOPROOF_SYSTEM_PRICE_IN="1",
        OLOPROOF_SYSTEM_PRICE_OUT="2",
    )

    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout.split("REPORT ", 1)[1])
    # The one field's value is `output`: the exact-match metric, verbatim, scores it.
    assert report["exact"] == 100.0
    one = report["one"]
    assert one["scores"]["accuracy"] == 1.0
    assert one["scores"]["speed"] > 0.5, one  # measured: a local call takes far below 2 s
    assert 0 < one["scores"]["cost"] <= 1.0, one
    assert "could not be measured" not in one["feedback"]
    subscores = report["subscores"]
    assert subscores, "GEPA kept no objective scores"
    assert {"accuracy", "speed", "cost"} <= set(subscores[0])
    assert all(entry["speed"] > 0 for entry in subscores)
