"""Record a judged run for the review page's bench, in the store of OLOPROOF_DATA_DIR.

Run as a script by `_review.py`, with the served checkout first on PYTHONPATH, so
the run is recorded by the same code that serves it:

    python bench/labels/_review_seed.py FOLDER CASES   (prints the run's id)

The judge is a metric file that asks a model; the model is the tests'
OpenAI-compatible stand-in on 127.0.0.1, which passes a reply that greets the
customer (four in five do).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from oloproof import evaluate, system
from oloproof.evaluators import MetricFile

METRIC = "greeting"
JUDGE_METRIC = """\
from skynet import llm


def score(input, output, expected=None):
    verdict = llm("Does the reply greet the customer? Answer PASS or FAIL.", input=str(output))
    return (1.0 if verdict.startswith("PASS") else 0.0), {"feedback": verdict}
"""


@system(name="greeter", version="1")
def greeter(case: dict[str, Any]) -> dict[str, str]:
    number = int(case["question"].split()[-1])
    return {"reply": f"{'Hello, ' if number % 5 else ''}your order {number} is on its way"}


def seed(folder: Path, cases: int) -> int:
    from tests.support.fake_openai import FakeOpenAI, Reply

    model = FakeOpenAI().start()
    model.respond_with(
        lambda request: Reply("PASS. Greets." if "Hello" in request.user_text else "FAIL. Curt.")
    )
    os.environ.update(
        OLOPROOF_DEFAULT_MODEL="judge-model",
        OLOPROOF_DEFAULT_BASE_URL=model.base_url,
        OLOPROOF_DEFAULT_PRICE_IN="1",
        OLOPROOF_DEFAULT_PRICE_OUT="2",
    )
    metric = folder / "greeting.py"
    metric.write_text(JUDGE_METRIC, encoding="utf-8")
    rows = [{"id": f"c-{i:05d}", "input": {"question": f"order {i}"}} for i in range(cases)]
    try:
        result = evaluate(
            greeter,
            rows,
            [MetricFile(metric, criterion=METRIC)],
            concurrency=8,
            isolation="thread",
        )
    finally:
        model.stop()
    if result.run_id is None:
        raise SystemExit("the judged run was not recorded")
    return int(result.run_id)


if __name__ == "__main__":
    print(seed(Path(sys.argv[1]), int(sys.argv[2])))
