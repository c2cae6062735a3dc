"""What a label is about, and which metrics a model judges.

A person's label judges one output of one input against one expected value, so it
is keyed by the digest of the three: a later run whose output is the same reuses
the label, and one whose output changed needs a new one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from oloproof_core._util.canonical import digest_value

__all__ = ["is_model_judged", "label_key", "model_judged_criteria"]

MODEL_JUDGED_KINDS = frozenset({"RubricJudge"})


def label_key(input: Any, output: Any, expected: Any) -> str:
    """The digest of what was judged: the case's input, the system's output, the expected value."""
    return digest_value({"input": input, "output": output, "expected": expected})


def is_model_judged(kind: str, parameters: Mapping[str, Any] | None) -> bool:
    """Whether a model gives the verdicts: a rubric judge, or a metric file that calls one."""
    if kind in MODEL_JUDGED_KINDS:
        return True
    return kind == "metric_file" and bool((parameters or {}).get("models"))


def model_judged_criteria(provenance: Mapping[str, Any]) -> frozenset[str]:
    """The criteria a run's provenance says a model judges."""
    return frozenset(
        str(item.get("criterion"))
        for item in provenance.get("evaluators") or []
        if is_model_judged(item.get("kind", ""), item.get("parameters"))
    )
