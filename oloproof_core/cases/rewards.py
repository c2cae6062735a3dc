"""`reward(REWARD_SPEC, accuracy, feedback)`: one score from accuracy, speed and cost.

The engine measures each case's wall time and the system's model cost itself; this
turns them, with the metric's accuracy, into a single 0..1 score whose parts are
kept as the sub-scores `accuracy`, `speed` and `cost`.

Formulas (r is the part's reference, x the measured or reported figure, x >= 0):

    speed    = r / (r + latency_ms)         r = speed.reference, in milliseconds
    cost     = r / (r + cost_usd)           r = cost.reference, in US dollars
    accuracy = the given value, in 0..1     without accuracy.reference
    accuracy = r / (r + error)              with accuracy.reference: the value is an error,
                                            lower is better
    score    = w_accuracy * accuracy + w_speed * speed + w_cost * cost

Each part is 1 at zero, exactly 0.5 at its reference and falls towards 0 as the
figure grows, strictly monotone and without a cliff: twice the reference scores
1/3, ten times the reference 1/11. The weights are rescaled to sum to 1, so the
score is in 0..1. A part that could not be measured (no timing, or a model call
that could not be priced) scores 0, and the feedback says so; so do speed and cost
when the system ran in oloproof's own process (`isolation="thread"`) or without a
sandbox, where the figures are not the platform's to vouch for.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Real
from typing import Any

from oloproof_core.cases.measurement import measured_or_none
from oloproof_core.errors import ContractError

PARTS = ("accuracy", "speed", "cost")
_UNITS = {"speed": "milliseconds", "cost": "US dollars", "accuracy": "units of the error"}
_SPEC_KEYS = ("weights", *PARTS)

_EXAMPLE = """\
    REWARD_SPEC = {
        "weights": {"accuracy": 0.7, "speed": 0.2, "cost": 0.1},
        "accuracy": {},
        "speed": {"reference": 2000},
        "cost": {"reference": 0.01},
    }"""


UNPROTECTED_NOTE = (
    "Speed and cost scored 0: the system ran where it could reach the clock or the model "
    "client (in oloproof's own process with isolation='thread', or in a process without a "
    "sandbox), so the platform cannot vouch for either figure. The run's provenance says "
    "which; to fix it, leave isolation at 'process' and install bubblewrap "
    "(docs/isolation.md; `oloproof doctor` checks)."
)


class RewardSpecError(ContractError):
    """REWARD_SPEC is malformed; the message names the key and shows a working spec."""

    def __init__(self, problem: str) -> None:
        super().__init__(f"REWARD_SPEC: {problem}. A valid spec looks like:\n{_EXAMPLE}")


@dataclass(frozen=True, slots=True)
class RewardSpec:
    """A validated REWARD_SPEC: weights summing to 1 and the references."""

    weights: Mapping[str, float]
    accuracy_reference: float | None
    speed_reference_ms: float | None
    cost_reference_usd: float | None


def check_reward_spec(spec: Any) -> RewardSpec:
    """Validate a REWARD_SPEC dict; raises RewardSpecError naming the offending key."""
    if not isinstance(spec, Mapping):
        raise RewardSpecError(f"it must be a dict, got {type(spec).__name__}")
    for key in spec:
        if key not in _SPEC_KEYS:
            raise RewardSpecError(f"unknown key {key!r}; the keys are {', '.join(_SPEC_KEYS)}")
    if "weights" not in spec:
        raise RewardSpecError("missing key 'weights'")
    weights = _weights(spec["weights"])
    references: dict[str, float | None] = {}
    for part in PARTS:
        section = spec.get(part, {})
        if not isinstance(section, Mapping):
            raise RewardSpecError(
                f"'{part}' must be a dict such as {{}} or {{'reference': ...}}, got {section!r}"
            )
        for key in section:
            if key != "reference":
                raise RewardSpecError(
                    f"unknown key '{part}.{key}'; the only key is '{part}.reference'"
                )
        reference = section.get("reference")
        if reference is None and part != "accuracy" and weights[part] > 0:
            raise RewardSpecError(
                f"missing key '{part}.reference' (a positive number in "
                f"{_UNITS[part]}); it is required while "
                f"weights.{part} > 0"
            )
        if reference is not None and not _positive(reference):
            raise RewardSpecError(
                f"'{part}.reference' must be a positive number in {_UNITS[part]}, got {reference!r}"
            )
        references[part] = None if reference is None else float(reference)
    return RewardSpec(
        weights=weights,
        accuracy_reference=references["accuracy"],
        speed_reference_ms=references["speed"],
        cost_reference_usd=references["cost"],
    )


def reward(spec: Any, accuracy: Any, feedback: Any) -> tuple[float, dict[str, Any]]:
    """Combine accuracy with the measured speed and cost into the metric's return pair."""
    checked = check_reward_spec(spec)
    if not isinstance(feedback, str):
        raise ContractError(f"reward(): feedback must be a string, got {type(feedback).__name__}")
    parts = {"accuracy": _accuracy_score(accuracy, checked.accuracy_reference)}
    notes: list[str] = []
    measured = measured_or_none()
    latency = None if measured is None else measured.latency_ms
    cost = None if measured is None else measured.cost_usd
    # Figures the system could reach earn no credit, whatever they say.
    unprotected = measured is not None and not measured.protected
    for part, figure, reference, why in (
        (
            "speed",
            latency,
            checked.speed_reference_ms,
            "Speed could not be measured (no timing for this case), so it scored 0.",
        ),
        (
            "cost",
            cost,
            checked.cost_reference_usd,
            "Cost could not be measured (a model call had no price), so it scored 0.",
        ),
    ):
        if reference is None:
            # Weight 0 and no reference: the part does not count, so it scores nothing.
            parts[part] = 0.0
        elif figure is None or unprotected:
            parts[part] = 0.0
            if checked.weights[part] > 0 and not unprotected:
                notes.append(why)
        else:
            parts[part] = half_at_reference(figure, reference)
    if unprotected and (checked.weights["speed"] > 0 or checked.weights["cost"] > 0):
        notes.append(UNPROTECTED_NOTE)
    total = sum(checked.weights[part] * parts[part] for part in PARTS)
    text = " ".join([feedback, *notes]) if feedback else " ".join(notes)
    return min(1.0, max(0.0, total)), {"feedback": text, "scores": parts}


def half_at_reference(figure: float, reference: float) -> float:
    """r / (r + x): 1 at zero, 0.5 at the reference, towards 0 beyond it."""
    return reference / (reference + max(0.0, figure))


def _accuracy_score(accuracy: Any, reference: float | None) -> float:
    if (
        isinstance(accuracy, bool)
        or not isinstance(accuracy, Real)
        or not math.isfinite(float(accuracy))
    ):
        raise ContractError(f"reward(): accuracy must be a number, got {accuracy!r}")
    value = float(accuracy)
    if reference is None:
        if not 0.0 <= value <= 1.0:
            raise ContractError(
                f"reward(): accuracy {value!r} is outside 0..1; give a score from 0 to 1, or "
                "set REWARD_SPEC['accuracy'] = {'reference': r} to pass an error where lower "
                "is better"
            )
        return value
    if value < 0:
        raise ContractError(
            f"reward(): with accuracy.reference the accuracy is an error "
            f"(0 or more, lower is better), got {value!r}"
        )
    return half_at_reference(value, reference)


def _weights(raw: Any) -> dict[str, float]:
    if not isinstance(raw, Mapping):
        raise RewardSpecError(
            f"'weights' must be a dict with keys accuracy, speed and cost, got {raw!r}"
        )
    for key in raw:
        if key not in PARTS:
            raise RewardSpecError(
                f"unknown key 'weights.{key}'; the weights are accuracy, speed and cost"
            )
    weights: dict[str, float] = {}
    for part in PARTS:
        if part not in raw:
            raise RewardSpecError(
                f"missing key 'weights.{part}'; weights must contain "
                "accuracy, speed and cost (use 0 to ignore one)"
            )
        value = raw[part]
        if (
            isinstance(value, bool)
            or not isinstance(value, Real)
            or not math.isfinite(float(value))
            or float(value) < 0
        ):
            raise RewardSpecError(f"'weights.{part}' must be a number of 0 or more, got {value!r}")
        weights[part] = float(value)
    total = sum(weights.values())
    if total == 0:
        raise RewardSpecError("all weights are 0; give at least one a positive weight")
    return {part: value / total for part, value in weights.items()}


def _positive(value: Any) -> bool:
    return (
        not isinstance(value, bool)
        and isinstance(value, Real)
        and math.isfinite(float(value))
        and float(value) > 0
    )
