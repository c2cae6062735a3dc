"""The benchmark's evaluators, at the top of a module so processes import them by name."""

from __future__ import annotations

from oloproof.evaluators import evaluator


@evaluator(criterion="label_ok", reads=("output", "expected"))
def label_ok(case):
    return case.output["label"] == case.expected["label"]
