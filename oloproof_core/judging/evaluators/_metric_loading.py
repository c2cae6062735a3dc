"""Executing a metric file, or reading the declaration of one executed elsewhere.

A run's own process reads a metric file named in a run config from the declaration of
the sandboxed process that executed it (`loaded_declaration`, `from_declaration`): the
file's top-level code runs there, never here. `load` executes it in this process, for a
metric file a user's own script or notebook builds.
"""

from __future__ import annotations

import importlib.util
import inspect
import math
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from numbers import Real
from types import ModuleType
from typing import Any

from oloproof_core._util.canonical import digest_bytes
from oloproof_core._util.imports import project_imports
from oloproof_core.errors import DeclarationError
from oloproof_core.judging.evaluators._base import check_score_range
from oloproof_core.judging.evaluators._metric_signature import misordered_parameters
from oloproof_core.models import ROLES

_CONTRACT = """\
    def score(input, output, expected=None):
        ...
        return score_value, {"feedback": "..."}"""

_MEASUREMENT_MODULES = frozenset(
    {"skynet", "oloproof_core.cases.measurement", "oloproof_core.cases.rewards"}
)
# `skynet` offers `llm` only (the metric role); the models modules can reach any role.
_MODEL_MODULES: Mapping[str, tuple[str, ...]] = {
    "skynet": ("metric",),
    "oloproof_core.models": ROLES,
    "oloproof.models": ROLES,
}


@dataclass(frozen=True, slots=True)
class LoadedMetric:
    """One version of a metric file: executed here, or declared by the process that
    executed it (`module` and `score` None: it judges only in a process of its own)."""

    module: ModuleType | None
    score: Callable[..., Any] | None
    takes_expected: bool
    score_range: tuple[float, float]
    sub_score_range: tuple[float, float]
    reads_measurements: bool
    model_roles: tuple[str, ...]
    digest: str
    content: bytes

    @property
    def calls_models(self) -> bool:
        return bool(self.model_roles)


def loaded_declaration(loaded: LoadedMetric) -> dict[str, Any]:
    """What the process that executed a metric file tells the run's process of it."""
    return {
        "takes_expected": loaded.takes_expected,
        "score_range": list(loaded.score_range),
        "sub_score_range": list(loaded.sub_score_range),
        "reads_measurements": loaded.reads_measurements,
        "model_roles": list(loaded.model_roles),
    }


def from_declaration(path: str, content: bytes, declared: Mapping[str, Any]) -> LoadedMetric:
    """A metric file's version as declared by the process that executed it, checked as
    if that process lied (its ranges, its roles); the digest is of the bytes read here."""
    try:
        score_range = check_score_range(declared["score_range"], f"metric file {path}")
        sub_range = check_score_range(declared["sub_score_range"], f"metric file {path}")
        roles = tuple(role for role in ROLES if role in declared["model_roles"])
        return LoadedMetric(
            module=None,
            score=None,
            takes_expected=declared["takes_expected"] is True,
            score_range=score_range,
            sub_score_range=sub_range,
            reads_measurements=declared["reads_measurements"] is True,
            model_roles=roles,
            digest=digest_bytes(content),
            content=content,
        )
    except (KeyError, TypeError) as exc:
        raise DeclarationError(
            f"metric file {path}: its declaration is malformed ({exc})"
        ) from None


def read_metric_file(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        raise DeclarationError(f"metric file {path} not found") from None
    except OSError as exc:
        raise DeclarationError(f"metric file {path} cannot be read: {exc}") from None


def load(path: str, content: bytes) -> LoadedMetric:
    digest = digest_bytes(content)
    module_name = f"oloproof_metric_{digest_bytes(path.encode())[:12]}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise DeclarationError(f"metric file {path} cannot be imported (is it a .py file?)")
    module = importlib.util.module_from_spec(spec)
    previous = sys.modules.get(module_name)
    sys.modules[module_name] = module
    try:
        # The metric imports helpers next to it from its own folder's namespace.
        with project_imports(os.path.dirname(path)):
            exec(compile(content, path, "exec"), module.__dict__)
    except (Exception, SystemExit) as exc:
        if previous is None:
            sys.modules.pop(module_name, None)
        else:
            sys.modules[module_name] = previous
        raise DeclarationError(
            f"metric file {path} failed to load: {type(exc).__name__}: {exc}"
        ) from exc
    score = getattr(module, "score", None)
    if not callable(score):
        raise DeclarationError(
            f"metric file {path} defines no function score; a metric file defines:\n\n{_CONTRACT}"
        )
    score_range = _declared_range(module, "SCORE_RANGE", path, (0.0, 1.0))
    reads_measurements, model_roles = _helpers_used(module)
    if hasattr(module, "REWARD_SPEC"):
        from oloproof_core.cases.rewards import RewardSpecError, check_reward_spec

        try:
            check_reward_spec(module.REWARD_SPEC)
        except RewardSpecError as exc:
            raise DeclarationError(f"{path}: {exc}") from None
        reads_measurements = True
    return LoadedMetric(
        module=module,
        score=score,
        takes_expected=_takes_expected(score, path),
        score_range=score_range,
        sub_score_range=_declared_range(module, "SUB_SCORE_RANGE", path, score_range),
        reads_measurements=reads_measurements,
        model_roles=model_roles,
        digest=digest,
        content=content,
    )


def _takes_expected(score: Callable[..., Any], path: str) -> bool:
    misordered = misordered_parameters(score, path)
    if misordered is not None:
        raise DeclarationError(misordered)
    signature = inspect.signature(score)
    params = list(signature.parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [
        p
        for p in params
        if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    varargs = any(p.kind is p.VAR_POSITIONAL for p in params)
    if (
        len(required) <= 3
        and all(p in positional for p in required)
        and (len(positional) >= 2 or varargs)
    ):
        return len(positional) >= 3 or varargs
    raise DeclarationError(
        f"metric file {path}: score{signature} must take (input, output) "
        f"or (input, output, expected=None):\n\n{_CONTRACT}"
    )


def _declared_range(
    module: ModuleType, name: str, path: str, default: tuple[float, float]
) -> tuple[float, float]:
    if not hasattr(module, name):
        return default
    declared = getattr(module, name)
    owner = f"metric file {path}: {name}"
    if (
        isinstance(declared, (tuple, list))
        and len(declared) == 2
        and all(
            not isinstance(b, bool) and isinstance(b, Real) and math.isfinite(float(b))
            for b in declared
        )
        and float(declared[0]) < float(declared[1])
    ):
        return float(declared[0]), float(declared[1])
    raise DeclarationError(
        f"{owner} must be a pair (lo, hi) of numbers with lo < hi, e.g. "
        f"{name} = (0, 10); got {declared!r}"
    )


def _helpers_used(module: ModuleType) -> tuple[bool, tuple[str, ...]]:
    """Whether the file reads measurements, and which model roles it may call.

    Judged by what the file imports: `llm` calls the metric role; `chat`, `achat`
    and `complete` take any role, as does a models module imported whole.
    """
    from oloproof_core.cases.measurement import observation, service_cost
    from oloproof_core.cases.rewards import reward
    from oloproof_core.models import achat, chat, complete, llm

    readers = {id(reward), id(observation), id(service_cost)}
    any_role = {id(chat), id(achat), id(complete)}
    reads_measurements = False
    roles: set[str] = set()
    for value in vars(module).values():
        if isinstance(value, ModuleType):
            reads_measurements |= value.__name__ in _MEASUREMENT_MODULES
            roles.update(_MODEL_MODULES.get(value.__name__, ()))
        else:
            reads_measurements |= id(value) in readers
            if value is llm:
                roles.add("metric")
            elif id(value) in any_role:
                roles.update(ROLES)
    return reads_measurements, tuple(role for role in ROLES if role in roles)
