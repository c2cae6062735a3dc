"""What the run's process holds of a run config's code: what it declared, not the code.

A `DeclaredSystem` is a system as its sandboxed probe declared it: its name, version,
components and how it travels (the reference its processes import, or the pickle the
probe made, passed on unread). A `DeclaredEvaluator` is an evaluator the same way, with
the pickle its own processes load. Neither can be called here: they run only in
processes of their own. What they declare is checked as if the probe lied (names and
versions as labels, ranges as ranges); a lie changes only how its own results are
labelled, never the protection around them.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from oloproof_core.errors import DeclarationError
from oloproof_core.execution.isolation import IsolationError
from oloproof_core.execution.isolation._first_process import FirstProcess
from oloproof_core.execution.isolation._reference import SystemReference
from oloproof_core.execution.systems import System
from oloproof_core.judging.evaluators import Evaluator
from oloproof_core.judging.evaluators._base import check_score_range
from oloproof_core.judging.evaluators._case_view import CaseView


class DeclaredSystem(System):
    """A run config's system, declared by the sandboxed process that imported it."""

    def __init__(
        self,
        declared: Mapping[str, Any],
        *,
        inner: Callable[[Any], Any] | None = None,
        first_process: FirstProcess | None = None,
    ) -> None:
        try:
            components = {str(k): str(v) for k, v in dict(declared["components"]).items()}
            version = declared["version"]
            super().__init__(
                _runs_only_in_its_sandbox,
                name=str(declared["name"]),
                version=None if version is None else str(version),
                components=components or None,
            )
            self.import_path = _optional_text(declared["import_path"])
            reference = declared["reference"]
            self._reference = None if reference is None else SystemReference.from_dict(reference)
            self._by_value = None if reference is not None else str(declared["value"])
            self.is_async = declared["is_async"] is True
            self.is_dspy_program = declared.get("dspy_program") is True
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise DeclarationError(f"the system's declaration is malformed ({exc})") from None
        self._declared = dict(declared)
        # One stand-in for the function: a release made from this one (other texts) is
        # the same function to a pool (`isolation._bindings`).
        self.inner = inner if inner is not None else functools.partial(_runs_only_in_its_sandbox)
        # The process that declared it, waiting to be its pool's first (a release made
        # from this one shares it: whichever pool opens first may adopt it).
        self.first_process = first_process

    def declared_travel(self) -> tuple[SystemReference | None, str | None]:
        return self._reference, self._by_value

    def with_components(self, texts: Mapping[str, str], *, version: str | None) -> System:
        return DeclaredSystem(
            {**self._declared, "components": dict(texts), "version": version},
            inner=self.inner,
            first_process=self.first_process,
        )

    def __repr__(self) -> str:
        return f"<system {self.release}>"


def _runs_only_in_its_sandbox(case_input: Any) -> NoReturn:
    raise IsolationError(
        "this system was imported in its sandbox to read its declaration; it runs only in "
        "processes of its own (isolation: process), never in oloproof's process"
    )


def _optional_text(value: Any) -> str | None:
    return None if value is None else str(value)


class DeclaredEvaluator(Evaluator):
    """A run config's `module:name` evaluator, declared by the process that imported it."""

    def __init__(self, declared: Mapping[str, Any]) -> None:
        try:
            described = declared["described"]
            super().__init__(
                criterion=described["criterion"],
                reads=tuple(described["reads"]),
                value_type=described["value_type"],
                score_range=tuple(described["score_range"]),
                per_turn=described.get("per_turn") is True,
            )
            owner = f"evaluator {self.criterion!r}"
            self._sub_score_range = check_score_range(declared["sub_score_range"], owner)
            self._kind = str(described["kind"])
            self._parameters = dict(described["parameters"])
            self._source = _optional_text(described["source"])
            self._range_hint = str(declared["range_hint"])
            self.io_bound = declared["io_bound"] is True
            self.is_async = declared["is_async"] is True
            self.__dict__["version"] = str(described["version"])
            self.pickled = base64.b64decode(declared["pickled"])
            self.files = tuple((str(a), str(b), str(c)) for a, b, c in declared["files"])
            self.folders = tuple(str(folder) for folder in declared["folders"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise DeclarationError(f"the evaluator's declaration is malformed ({exc})") from None

    @property
    def kind(self) -> str:
        return self._kind

    @property
    def sub_score_range(self) -> tuple[float, float]:
        return self._sub_score_range

    def parameters(self) -> dict[str, Any]:
        return self._parameters

    @property
    def source(self) -> str | None:
        return self._source

    def range_hint(self) -> str:
        return self._range_hint

    def judge(self, case: CaseView) -> NoReturn:
        raise IsolationError(
            f"evaluator {self.criterion!r} was imported in a sandbox to read its declaration; "
            "it judges only in a process of its own"
        )
