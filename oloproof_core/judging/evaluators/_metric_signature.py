"""A metric's `score` whose parameter names say another order than the one it is called in.

`score` is called by position: `score(input, output)` for two parameters,
`score(input, output, expected)` for three. A function written `score(output, expected)`
would receive the case's input as `output` and its output as `expected`, and fail (or,
worse, pass) on every case for a reason its author cannot see. Its names say what it
expects, so the loader refuses it, naming the line and the order that works.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

_ROLES = ("input", "output", "expected")


def misordered_parameters(score: Callable[..., Any], path: str) -> str | None:
    """Why `score`'s parameter names disagree with how it is called, or None."""
    try:
        signature = inspect.signature(score)
    except (TypeError, ValueError):
        return None
    parameters = signature.parameters.values()
    positional = [
        parameter.name
        for parameter in parameters
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
    ][:3]
    # `*args` takes whatever is passed: such a score is called with all three.
    varargs = any(parameter.kind is parameter.VAR_POSITIONAL for parameter in parameters)
    if len(positional) < 2 and not varargs:
        return None  # refused as a signature that takes too few parameters
    called = _ROLES[: 3 if varargs else len(positional)]
    wrong = [
        (name, role)
        for name, role in zip(positional, called, strict=False)
        if name in _ROLES and name != role
    ]
    if not wrong:
        return None
    name, role = wrong[0]
    code = getattr(score, "__code__", None)
    where = f"{path}:{code.co_firstlineno}" if code is not None else path
    return (
        f"metric file {where}: score{signature} is called as "
        f"score({', '.join(called)}), by position, so its parameter {name!r} would "
        f"receive the case's {role}; name the parameters in that order: "
        "def score(input, output, expected=None)"
    )
