"""The shape of a result file (`Result.to_json`), checked before it is read back.

A result file is read by `oloproof gate`, `compare` and `plan`, and as a baseline. One
that parses as JSON but holds something else where a figure belongs (`"provenance":
{"system": true}`, a string for `n_observed`) is refused here, naming the first place
and what belongs there, rather than failing later inside a gate or a comparison. The
schema states what the readers rely on; keys it does not name are kept as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_NUMBER = {"type": "number"}
_COUNT = {"type": "integer", "minimum": 0}
_TEXT_OR_NULL = {"type": ["string", "null"]}
_OBJECT_OR_NULL = {"type": ["object", "null"]}
_PROVENANCE_PARTS = ("system", "dataset", "judging", "execution", "sequential")

_METRIC = {
    "type": "object",
    "required": [
        "metric",
        "estimate",
        "interval",
        "n_observed",
        "n_missing",
        "method",
        "confidence",
        "value_type",
        "score_range",
    ],
    "properties": {
        "metric": {"type": "string", "minLength": 1},
        "criterion": {"type": "string", "minLength": 1},
        "estimate": {"type": ["number", "null"]},
        "interval": {
            "type": "object",
            "required": ["lower", "upper"],
            "properties": {"lower": _NUMBER, "upper": _NUMBER},
        },
        "n_observed": _COUNT,
        "n_missing": _COUNT,
        "method": {"type": "string"},
        "confidence": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "value_type": {"enum": ["pass_fail", "score"]},
        "score_range": {"type": "array", "items": _NUMBER, "minItems": 2, "maxItems": 2},
        "n_clusters": {"type": ["integer", "null"], "minimum": 0},
        "warning": _TEXT_OR_NULL,
    },
}
_VERDICT = {
    "type": "object",
    "required": ["value"],
    "properties": {
        "value": {"type": ["number", "null"]},
        "feedback": _TEXT_OR_NULL,
        "scores": {"type": ["object", "null"], "additionalProperties": _NUMBER},
        "error": _TEXT_OR_NULL,
        "traceback": _TEXT_OR_NULL,
    },
}
_CASE = {
    "type": "object",
    "required": ["id", "input"],
    "properties": {
        "id": {"type": "string"},
        "split": _TEXT_OR_NULL,
        "cluster": _TEXT_OR_NULL,
        "error": {
            "type": ["object", "null"],
            "required": ["type", "message"],
            "properties": {"type": {"type": "string"}, "message": {"type": "string"}},
        },
        "artifacts": _OBJECT_OR_NULL,
        "latency_ms": {"type": ["number", "null"]},
        "model_calls": {"type": ["array", "null"], "items": {"type": "object"}},
        "verdicts": {"type": ["object", "null"], "additionalProperties": _VERDICT},
        "trace": {
            "type": ["object", "null"],
            "properties": {"steps": {"type": "array", "items": {"type": "object"}}},
        },
    },
}
RESULT_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "required": ["metrics", "provenance"],
    "properties": {
        "run_id": {"type": ["string", "integer", "null"]},
        "metrics": {"type": "array", "items": _METRIC},
        "cases": {"type": "array", "items": _CASE},
        "provenance": {
            "type": "object",
            "additionalProperties": True,
            "properties": dict.fromkeys(
                ("system", "dataset", "judging", "execution", "sequential"), _OBJECT_OR_NULL
            ),
        },
        "labels": {"type": ["object", "null"], "additionalProperties": {"type": "object"}},
    },
}


def result_shape_problem(data: Any) -> str | None:
    """Where `data` first differs from a result file's shape, and what belongs there."""
    import jsonschema  # here: only a result file being read needs it

    validator = jsonschema.Draft202012Validator(RESULT_SCHEMA)
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is None:
        return None
    where = "".join(
        f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path
    )
    message = error.message if len(error.message) <= 160 else error.message[:160] + "…"
    return f"{where.lstrip('.') or 'the top level'}: {message}"
