"""A built-in evaluator named in a run config's `evaluators:` list, made from its parameters.

`- Regex` (a bare name) and `- Regex: {pattern: ...}` both end here. Every way the
parameters can be wrong — unknown, missing, of a value the evaluator refuses — is a
ConfigError that names the entry, what is wrong and the form that works, never the
`TypeError` of a Python call.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from oloproof_core.errors import ConfigError, OloproofError
from oloproof_core.judging.evaluators import BUILTIN_EVALUATORS, Evaluator

_EXAMPLES = {
    "ExactMatch": "{criterion: exact_label, field: label}",
    "Contains": "{criterion: mentions_refund, value: refund}",
    "Regex": "{criterion: has_order_id, pattern: 'ORD-[0-9]+'}",
    "JsonSchema": "{criterion: valid_reply, schema: reply.schema.json}",
    "RubricJudge": "{criterion: helpful, rubric: 'The answer is polite and correct.'}",
    "ToolUsed": "{criterion: looked_up, tool: lookup_order}",
    "ToolSequence": "{criterion: right_tools, field: tools, match: strict}",
    "StepCount": "{criterion: few_calls, max_model_calls: 5}",
    "CaseBudget": "{criterion: within_budget, max_latency_ms: 5000, max_cost_usd: 0.01}",
    "TrajectoryJudge": "{criterion: sensible, rubric: 'Each tool call is needed.'}",
}


def builtin_evaluator(label: str, name: str, params: Any) -> Evaluator:
    """The built-in evaluator `name` made from `params` (None: its defaults), or a
    ConfigError starting with `label` (the config's file, line and entry)."""
    if params is not None and not isinstance(params, Mapping):
        raise ConfigError(
            f"{label}: the parameters of {name} are a mapping, e.g.:\n"
            f"  - {name}: {_EXAMPLES.get(name, '{criterion: name}')}"
        )
    given = dict(params or {})
    factory = BUILTIN_EVALUATORS[name]
    allowed, required = _parameters(factory)
    for key in given:
        if allowed is not None and key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(
                f"{label}: {name} has no parameter {key!r}{hint}; its parameters "
                f"are {', '.join(allowed)}"
            )
    missing = [key for key in required if key not in given]
    if missing:
        needed = " and ".join(repr(key) for key in missing)
        raise ConfigError(
            f"{label}: {name} needs the parameter{'s' if len(missing) > 1 else ''} {needed}; "
            f"write it as:\n  - {name}: {_EXAMPLES.get(name, '{criterion: name}')}"
        )
    try:
        return factory(**given)
    except OloproofError as exc:
        raise ConfigError(f"{label}: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{label}: {name}: {exc}") from None


def meant(name: object) -> str:
    """` (did you mean 'ExactMatch'?)` for a name close to a built-in evaluator's, else ""."""
    if not isinstance(name, str):
        return ""
    close = difflib.get_close_matches(name, list(BUILTIN_EVALUATORS), n=1, cutoff=0.6)
    close = close or [known for known in BUILTIN_EVALUATORS if known.lower() == name.lower()]
    return f" (did you mean {close[0]!r}?)" if close else ""


def _parameters(factory: Callable[..., Any]) -> tuple[list[str] | None, list[str]]:
    """(the keyword parameters, or None when any is taken; those without a default)."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return None, []
    named = [
        parameter
        for parameter in signature.parameters.values()
        if parameter.kind in (parameter.KEYWORD_ONLY, parameter.POSITIONAL_OR_KEYWORD)
    ]
    required = [parameter.name for parameter in named if parameter.default is parameter.empty]
    if any(parameter.kind == parameter.VAR_KEYWORD for parameter in signature.parameters.values()):
        return None, required
    return [parameter.name for parameter in named], required
