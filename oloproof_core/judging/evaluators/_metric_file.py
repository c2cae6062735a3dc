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

import os
from collections.abc import Callable, Mapping
from numbers import Real
from typing import Any

from oloproof_core._util.canonical import digest_bytes
from oloproof_core._util.limits import text_problem
from oloproof_core.cases.measurement import judging_with
from oloproof_core.cases.verdict import Verdict
from oloproof_core.errors import ContractError
from oloproof_core.judging.evaluators._base import Evaluator
from oloproof_core.judging.evaluators._case_view import CaseView
from oloproof_core.judging.evaluators._metric_loading import (
    LoadedMetric,
    from_declaration,
    load,
    read_metric_file,
)
from oloproof_core.models import model_identity

REQUIRED_SHAPE = """\
score() must return a pair (a tuple or a two-element list):
  1. the score, a number;
  2. a dict with key "feedback" (a string) and optionally "scores" (names to numbers).
For example:
    return 1.0, {"feedback": "Correct."}
    return 0.5, {"feedback": "Missing field 'date'.", "scores": {"format": 1.0, "fields": 0.5}}"""


class MetricFile(Evaluator):
    """Judge cases with the `score` function of a metric file.

    `criterion` defaults to the file's name without `.py`, or to its folder's name
    when the file is called `metric.py`. Sub-scores returned under `"scores"` become
    metrics `<criterion>.<name>`.
    """

    _declare_again: Callable[[bytes], Mapping[str, Any]] | None = None
    """Set on a file read in its sandbox: declares changed bytes there (`refresh`)."""

    def __init__(
        self, path: str | os.PathLike[str], *, criterion: str | None = None, per_turn: bool = False
    ) -> None:
        path = os.path.abspath(os.fspath(path))
        criterion = criterion or default_criterion(path)
        self._adopt(path, load(path, read_metric_file(path)), criterion, per_turn)

    def _adopt(
        self, path: str, loaded: LoadedMetric, criterion: str, per_turn: bool = False
    ) -> None:
        self.path = path
        super().__init__(
            criterion=criterion,
            reads=_reads_of(loaded),
            value_type="score",
            score_range=loaded.score_range,
            per_turn=per_turn,
        )
        self._loaded = loaded
        self._models = _identities(loaded.model_roles)
        self.io_bound = loaded.calls_models

    @classmethod
    def declared(
        cls,
        path: str,
        content: bytes,
        criterion: str,
        declaration: Mapping[str, Any],
        *,
        declare_again: Callable[[bytes], Mapping[str, Any]],
    ) -> MetricFile:
        """The metric file these bytes make, as the process that executed them declared it
        (`loaded_declaration`); it judges only in a process of its own. `declare_again`
        declares a changed file's new bytes the same way (`refresh`)."""
        metric = cls.__new__(cls)
        metric._declare_again = declare_again
        metric._adopt(path, from_declaration(path, content, declaration), criterion)
        return metric

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as the bytes the run loaded (its version), not as the module they made:
        # an evaluator's process executes them again (oloproof_core.judging.contained).
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

    @property
    def source(self) -> str | None:
        return self.path  # the file itself, whether executed here or in its process

    def code_digest(self) -> str:
        return self._loaded.digest

    def refresh(self) -> None:
        """Re-read the file and the models it calls; a change of either is a new version."""
        content = read_metric_file(self.path)
        if digest_bytes(content) != self._loaded.digest:
            declare_again = self._declare_again
            loaded = (
                load(self.path, content)
                if declare_again is None
                else from_declaration(self.path, content, declare_again(content))
            )
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
        loaded = self._executed()
        with judging_with(self.criterion, self.reads):
            if loaded.takes_expected:
                return loaded.score(case.input, case.output, case.expected)
            return loaded.score(case.input, case.output)

    def score(self, input: Any, output: Any, expected: Any = None) -> Verdict:
        """Call the metric directly (outside a run) and check its return value."""
        loaded = self._executed()
        with judging_with(self.criterion, self.reads):
            raw = (
                loaded.score(input, output, expected)
                if loaded.takes_expected
                else loaded.score(input, output)
            )
        return self.to_verdict(raw)

    def _executed(self) -> Any:
        if self._loaded.score is None:
            from oloproof_core.execution.isolation import IsolationError

            raise IsolationError(
                f"metric file {self.path} was read in a sandboxed process: it judges in a "
                "process of its own, not in this one"
            )
        return self._loaded

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
    metric._adopt(path, load(path, content), criterion)
    return metric


def default_criterion(path: str) -> str:
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem == "metric":
        return os.path.basename(os.path.dirname(path)) or stem
    return stem


def _reads_of(loaded: LoadedMetric) -> tuple[str, ...]:
    reads = ("input", "output", "expected") if loaded.takes_expected else ("input", "output")
    return (*reads, "measurements") if loaded.reads_measurements else reads


def _identities(roles: tuple[str, ...]) -> dict[str, dict[str, str | None]]:
    return {role: model_identity(role) for role in roles}


def _shown(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:120]}{'…' if len(text) > 120 else ''}"
