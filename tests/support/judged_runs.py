"""A recorded run of a model-judged metric: for the metric page and the review queue.

`tone` is a metric file whose `llm` call goes to the tests' OpenAI-compatible stand-in
server: it scores 1 a reply that greets the customer and 0 one that does not (every
third reply), with the model's words as feedback. `exact_label` (pass/fail, no model)
sits beside it. Case ids are `q-000`, `q-001`, ...
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from oloproof import evaluate, system
from oloproof.evaluators import ExactMatch, MetricFile
from runs.models import Run
from runs.store import DjangoStore
from tests.support.fake_openai import FakeOpenAI, Reply

TONE_METRIC = """\
from skynet import llm


def score(input, output, expected=None):
    verdict = llm("Does the reply greet the customer? Answer PASS or FAIL.", input=str(output))
    return (1.0 if verdict.startswith("PASS") else 0.0), {"feedback": verdict}
"""

GREETS = "PASS. Greets the customer."
CURT = "FAIL. No greeting at all."


@system(name="greeter", version="1")
def greeter(case: dict[str, Any]) -> dict[str, str]:
    number = int(case["question"].split()[-1])
    return {"label": "refund", "reply": f"{'Hello, ' if number % 3 else ''}answer {number}"}


def judged_rows(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"q-{i:03d}",
            "input": {"question": f"question {i}"},
            "expected": {"label": "refund" if i % 4 else "shipping"},
        }
        for i in range(n)
    ]


def judged_run(models_on: FakeOpenAI, folder: Path, n: int = 20) -> Run:
    """A run of `greeter` judged on `tone` (by the stand-in model) and `exact_label`."""
    models_on.respond_with(lambda request: Reply(GREETS if "Hello" in request.user_text else CURT))
    metric = folder / "tone.py"
    metric.write_text(TONE_METRIC, encoding="utf-8")
    result = evaluate(
        greeter,
        judged_rows(n),
        [MetricFile(metric, criterion="tone"), ExactMatch(criterion="exact_label", field="label")],
        store=DjangoStore(),
        concurrency=1,
        isolation="thread",
    )
    return Run.objects.get(pk=int(result.run_id))
