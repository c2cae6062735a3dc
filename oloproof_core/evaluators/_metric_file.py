"""Metric files: a file defining `score(input, output, expected=None)` is an evaluator.

    def score(input, output, expected=None):
        ...
        return score_value, {"feedback": "...", "scores": {"format": 1.0}}

The return value is checked against the metric contract on every case; a score
outside the declared range (`SCORE_RANGE = (lo, hi)` at module level, 0..1 by
default) fails the check with a message that says how to declare it. The file is
digested into the version and re-read before every run, so editing it re-judges.
A file that calls models also has the identity (model and endpoint) of every role
it may call in its version: pointing `llm()` at another model re-judges too.
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

from oloproof_core._canonical import digest_bytes
from oloproof_core.errors import ContractError, DeclarationError
from oloproof_core.evaluators._base import Evaluator
from oloproof_core.evaluators._case_view import CaseView
from oloproof_core.evaluators._metric_signature import misordered_parameters
from oloproof_core.imports import project_imports
from oloproof_core.limits import text_problem
from oloproof_core.measurement import judging_with
from oloproof_core.models import ROLES, model_identity
from oloproof_core.verdict import Verdict

REQUIRED_SHAPE = """\
score() must return a pair (a tuple or a two-element list):
  1. the score, a number;
  2. a dict with key "feedback" (a string) and optionally "scores" (names to numbers).
For example:
    return 1.0, {"feedback": "Correct."}
    return 0.5, {"feedback": "Missing field 'date'.", "scores": {"format": 1.0, "fields": 0.5}}"""

_CONTRACT = """\
    def score(input, output, expected=None):
        ...
        return score_value, {"feedback": "..."}"""

_MEASUREMENT_MODULES = frozenset({"skynet", "oloproof_core.measurement", "oloproof_core.rewards"})
# `skynet` offers `llm` only (the metric role); the models modules can reach any role.
_MODEL_MODULES: Mapping[str, tuple[str, ...]] = {
    "skynet": ("metric",),
    "oloproof_core.models": ROLES,
    "oloproof.models": ROLES,
}


@dataclass(frozen=True, slots=True)
class _LoadedMetric:
    """One version of a metric file, executed."""

    module: ModuleType
    score: Callable[..., Any]
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


class MetricFile(Evaluator):
    """Judge cases with the `score` function of a metric file.

    `criterion` defaults to the file's name without `.py`, or to its folder's name
    when the file is called `metric.py`. Sub-scores returned under `"scores"` become
    metrics `<criterion>.<name>`.
    """

    def __init__(self, path: str | os.PathLike[str], *, criterion: str | None = None) -> None:
        path = os.path.abspath(os.fspath(path))
        self._adopt(path, _load(path, _read(path)), criterion or default_criterion(path))

    def _adopt(self, path: str, loaded: _LoadedMetric, criterion: str) -> None:
        self.path = path
        super().__init__(
            criterion=criterion,
            reads=_reads_of(loaded),
            value_type="score",
            score_range=loaded.score_range,
        )
        self._loaded = loaded
        self._models = _identities(loaded.model_roles)
        self.io_bound = loaded.calls_models

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as the bytes the run loaded (its version), not as the module they made:
        # an evaluator's process executes them again (oloproof_core.contained_evaluators).
        return (metric_file_from, (self.path, self._loaded.content, self.criterion))

    @property
    def kind(self) -> str:
        return "metric_file"

    @property
    def sub_score_range(self) -> tuple[float, float]:
        return self._loaded.sub_score_range

    def parameters(self) -> dict[str, Any]:
        parameters: dict[str, Any] = {"file": os.path.basename(self.path)}
        if self._models:  # absent for files that call no model: their versions stay
            parameters["models"] = self._models
        return parameters

    def source_object(self) -> Any:
        return self._loaded.module

    def code_digest(self) -> str:
        return self._loaded.digest

    def refresh(self) -> None:
        """Re-read the file and the models it calls; a change of either is a new version."""
        content = _read(self.path)
        if digest_bytes(content) != self._loaded.digest:
            loaded = _load(self.path, content)
            self._loaded = loaded
            self.reads = _reads_of(loaded)
            self.score_range = loaded.score_range
            self.io_bound = loaded.calls_models
            self.__dict__.pop("version", None)
        models = _identities(self._loaded.model_roles)
        if models != self._models:
            self._models = models
            self.__dict__.pop("version", None)

    def judge(self, case: CaseView) -> Any:
        loaded = self._loaded
        with judging_with(self.criterion, self.reads):
            if loaded.takes_expected:
                return loaded.score(case.input, case.output, case.expected)
            return loaded.score(case.input, case.output)

    def score(self, input: Any, output: Any, expected: Any = None) -> Verdict:
        """Call the metric directly (outside a run) and check its return value."""
        loaded = self._loaded
        with judging_with(self.criterion, self.reads):
            raw = (
                loaded.score(input, output, expected)
                if loaded.takes_expected
                else loaded.score(input, output)
            )
        return self.to_verdict(raw)

    def to_verdict(self, raw: Any) -> Verdict:
        """The metric return value contract check."""
        where = f"metric {self.criterion!r} ({self.path})"
        if not isinstance(raw, (tuple, list)) or len(raw) != 2:
            raise ContractError(f"{where} returned {_shown(raw)}.\n{REQUIRED_SHAPE}")
        value, info = raw
        if isinstance(value, bool) or not isinstance(value, Real):
            raise ContractError(
                f"{where} returned {_shown(raw)}: the score is "
                f"{_shown(value)}, not a number.\n{REQUIRED_SHAPE}"
            )
        if not isinstance(info, Mapping):
            raise ContractError(
                f"{where} returned {_shown(raw)}: the second element is "
                f"{_shown(info)}, not a dict.\n{REQUIRED_SHAPE}"
            )
        feedback = info.get("feedback")
        if not isinstance(feedback, str):
            problem = (
                'has no key "feedback"'
                if "feedback" not in info
                else f'has "feedback" = {_shown(feedback)}, not a string'
            )
            raise ContractError(
                f"{where} returned {_shown(raw)}: the dict {problem}.\n{REQUIRED_SHAPE}"
            )
        scores = info.get("scores", {})
        if not isinstance(scores, Mapping) or not all(
            isinstance(name, str) and name and not isinstance(sub, bool) and isinstance(sub, Real)
            for name, sub in scores.items()
        ):
            raise ContractError(
                f'{where} returned {_shown(raw)}: "scores" must map names '
                f"(strings) to numbers, got {_shown(scores)}.\n"
                f"{REQUIRED_SHAPE}"
            )
        unstorable = text_problem(feedback) or next(
            (f"score name {name!r} {text_problem(name)}" for name in scores if text_problem(name)),
            None,
        )
        if unstorable:
            raise ContractError(f'{where} returned a "feedback" or score name that {unstorable}')
        checked = {name: self.check_score(sub, name) for name, sub in scores.items()}
        return Verdict(value=self.check_score(value), feedback=feedback, scores=checked)

    def range_hint(self) -> str:
        name = os.path.basename(self.path)
        return (
            f"if that is a valid score, declare the range at module level in {name}, "
            f"e.g. SCORE_RANGE = (0, 10) (sub-scores: SUB_SCORE_RANGE = (lo, hi))"
        )


def metric_file_from(path: str, content: bytes, criterion: str) -> MetricFile:
    """The metric file `path` as these bytes of it make it, whatever the file says now."""
    metric = MetricFile.__new__(MetricFile)
    metric._adopt(path, _load(path, content), criterion)
    return metric


def default_criterion(path: str) -> str:
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem == "metric":
        return os.path.basename(os.path.dirname(path)) or stem
    return stem


def _reads_of(loaded: _LoadedMetric) -> tuple[str, ...]:
    reads = ("input", "output", "expected") if loaded.takes_expected else ("input", "output")
    return (*reads, "measurements") if loaded.reads_measurements else reads


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        raise DeclarationError(f"metric file {path} not found") from None
    except OSError as exc:
        raise DeclarationError(f"metric file {path} cannot be read: {exc}") from None


def _load(path: str, content: bytes) -> _LoadedMetric:
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
        from oloproof_core.rewards import RewardSpecError, check_reward_spec

        try:
            check_reward_spec(module.REWARD_SPEC)
        except RewardSpecError as exc:
            raise DeclarationError(f"{path}: {exc}") from None
        reads_measurements = True
    return _LoadedMetric(
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
    from oloproof_core.measurement import observation, service_cost
    from oloproof_core.models import achat, chat, complete, llm
    from oloproof_core.rewards import reward

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


def _identities(roles: tuple[str, ...]) -> dict[str, dict[str, str | None]]:
    return {role: model_identity(role) for role in roles}


def _shown(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:120]}{'…' if len(text) > 120 else ''}"
