"""An example system: a support bot that routes questions to a label."""

from oloproof import system
from oloproof.evaluators import evaluator


@system(name="support-bot", version="1")
def answer(case):
    return {"label": "refund" if "refund" in case["question"].lower() else "other"}


@evaluator(criterion="known_label", reads=("output",))
def known_label(case):
    return case.output["label"] in {"refund", "other"}
