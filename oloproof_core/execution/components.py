"""Named text components of a system (a system prompt, an instruction, a few-shot block).

A system reads its components through `component("system_prompt")` instead of
holding the text itself, so an optimizer can hand it other texts. The texts in
force are bound to the system's function: a system declared with
`@system(components={...})` reads its declared texts, and each candidate of an
optimization is the same function bound to that candidate's texts. The binding is
a context variable set around each call, so it follows the call into threads the
engine starts and asyncio tasks, and nothing else can see it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from types import MappingProxyType
from typing import Any

from oloproof_core.errors import OloproofError

_ACTIVE: ContextVar[Mapping[str, str] | None] = ContextVar("oloproof_components", default=None)


def component(name: str) -> str:
    """The text of component `name` in force for the system being called."""
    texts = _ACTIVE.get()
    if texts is None:
        raise OloproofError(
            f"component({name!r}) was read outside a system that declares components: "
            f"declare it with @system(..., components={{{name!r}: '...'}}) or in the "
            "optimization config's `components:`"
        )
    if name not in texts:
        known = ", ".join(sorted(texts)) or "none"
        raise OloproofError(f"component {name!r} is not declared; declared components: {known}")
    return texts[name]


def check_components(texts: Mapping[str, Any], *, where: str) -> dict[str, str]:
    """A plain copy of `texts`, which must map non-empty names to strings."""
    if not isinstance(texts, Mapping) or not texts:
        raise OloproofError(
            f"{where}: components map names to texts, e.g. "
            "{'system_prompt': 'You are a support bot.'}"
        )
    checked: dict[str, str] = {}
    for name, text in texts.items():
        if not isinstance(name, str) or not name or not isinstance(text, str):
            raise OloproofError(
                f"{where}: component {name!r} must be a name with a text "
                f"(a string), got {type(text).__name__}"
            )
        checked[name] = text
    return checked


def bind_components(fn: Callable[[Any], Any], texts: Mapping[str, str]) -> Callable[[Any], Any]:
    """`fn` with `texts` in force while it runs (an async function stays async)."""
    frozen = MappingProxyType(dict(texts))
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def run_async(case_input: Any) -> Any:
            token = _ACTIVE.set(frozen)
            try:
                return await fn(case_input)
            finally:
                _ACTIVE.reset(token)

        return run_async

    @functools.wraps(fn)
    def run(case_input: Any) -> Any:
        token = _ACTIVE.set(frozen)
        try:
            return fn(case_input)
        finally:
            _ACTIVE.reset(token)

    return run
