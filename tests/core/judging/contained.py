"""What the tests of evaluators judging in processes of their own share: a system that
echoes its input, rows for it, a metric file written to a folder, and a run's verdicts."""

from __future__ import annotations

import textwrap

from oloproof import system

BACKTRACKS = "a" * 40 + "!"
"""An output on which `(a+)+$` backtracks for longer than any run would wait."""


@system(name="echo", version="1")
def echo(case):
    return case["text"]


def rows(*texts: str) -> list[dict]:
    return [
        {"id": f"c{i}", "input": {"text": text}, "expected": {"text": text}}
        for i, text in enumerate(texts)
    ]


def write_metric(folder, body: str, name: str = "metric.py"):
    path = folder / name
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def verdicts(result, criterion: str) -> dict[str, object]:
    return {case.id: case.verdicts[criterion] for case in result.cases}
