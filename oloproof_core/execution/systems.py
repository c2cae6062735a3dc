"""Systems under test: a function that receives a case's input and returns its output."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from oloproof_core._util.imports import plain_module_name
from oloproof_core._util.limits import label_problem
from oloproof_core.errors import DeclarationError, OloproofError
from oloproof_core.execution.components import bind_components, check_components

_WORKING_FORM = """\
    @system(name="support-bot", version="1")
    def answer(case):
        return {"label": "refund" if "refund" in case["question"].lower() else "other"}"""


class System:
    """A system at a version: the release under evaluation.

    Calling it runs the wrapped function unchanged, so a decorated function still
    works as before in the user's own code.
    """

    def __init__(
        self,
        fn: Callable[[Any], Any],
        *,
        name: str,
        version: str | None,
        import_path: str | None = None,
        warmup: Callable[[], Any] | None = None,
        components: Mapping[str, str] | None = None,
    ) -> None:
        _check_signature(fn)
        for what, label in (("system name", name), ("version", version)):
            problem = None if label is None else label_problem(str(label), what)
            if problem:
                raise DeclarationError(f"the {what} {str(label)[:60]!r}… {problem}")
        self.inner = fn
        self.components: dict[str, str] = {}
        if components is not None:
            try:
                self.components = check_components(components, where=f"system {name!r}")
            except OloproofError as exc:
                raise DeclarationError(str(exc)) from None
        # The texts are bound into the function itself, so they travel with it (and a
        # system's own process binds them again from its setup: see isolation).
        self.fn = bind_components(fn, self.components) if self.components else fn
        self.warmup = warmup
        self.name = name
        self.version = version
        self.is_async = inspect.iscoroutinefunction(fn)
        self.import_path = import_path or _import_path(fn)
        functools.update_wrapper(self, fn)

    def __call__(self, case_input: Any) -> Any:
        return self.fn(case_input)

    def with_components(self, texts: Mapping[str, str], *, version: str | None) -> System:
        """The same function at another version, reading `texts` as its components."""
        return System(
            self.inner,
            name=self.name,
            version=version,
            import_path=self.import_path,
            warmup=self.warmup,
            components=texts,
        )

    def declared_travel(self) -> tuple[Any, str | None] | None:
        """How a system known here only by its declaration reaches its processes (its
        reference, or its pickle); None for a system whose function is here."""
        return None

    @property
    def release(self) -> str:
        return f"{self.name}@{self.version}" if self.version is not None else self.name

    def __repr__(self) -> str:
        return f"<system {self.release}>"


def system(
    name: str | None = None,
    version: str | int | None = None,
    *,
    warmup: Callable[[], Any] | None = None,
    components: Mapping[str, str] | None = None,
) -> Callable[[Callable[[Any], Any]], System]:
    """Declare a function as a system (a release: `name` at `version`).

    `warmup`, if given, is called once in each process that runs the system, before
    its first case and outside any timing (load a model, open a client). `components`
    names the texts the function reads with `component(name)`; an optimization hands
    it other texts.
    """
    if callable(name):
        raise DeclarationError(
            "use @system(name=..., version=...) with parentheses:\n\n" + _WORKING_FORM
        )

    def declare(fn: Callable[[Any], Any]) -> System:
        return System(
            fn,
            name=name or fn.__name__,
            version=None if version is None else str(version),
            warmup=warmup,
            components=components,
        )

    return declare


def as_system(candidate: Any) -> System:
    """Accept a declared System, or wrap a plain function (unversioned) or a DSPy program."""
    if isinstance(candidate, System):
        return candidate
    if callable(candidate):
        name = getattr(candidate, "__name__", type(candidate).__name__)
        return System(candidate, name=name, version=None)
    raise DeclarationError(
        f"system must be a function taking the case's input, got "
        f"{type(candidate).__name__}:\n\n{_WORKING_FORM}"
    )


def _check_signature(fn: Callable[..., Any]) -> None:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    required = [
        p
        for p in signature.parameters.values()
        if p.default is p.empty
        and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    takes_varargs = any(p.kind is p.VAR_POSITIONAL for p in signature.parameters.values())
    if len(required) == 1 or (not required and (takes_varargs or signature.parameters)):
        return
    shown = f"{getattr(fn, '__name__', 'system')}{signature}"
    raise DeclarationError(
        f"a system takes one argument, the case's input (a dict), and returns the output; "
        f"{shown} takes {len(required)} required parameters. The working form:\n\n" + _WORKING_FORM
    )


def _import_path(fn: Callable[..., Any]) -> str | None:
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    if not module or not qualname or "<locals>" in qualname:
        return None
    return f"{plain_module_name(module)}:{qualname}"
