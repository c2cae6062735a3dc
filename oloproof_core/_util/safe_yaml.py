"""YAML read safely: no aliases, bounded nesting, one parse for the data and its lines.

`yaml.safe_load` expands aliases, so a few hundred bytes of anchors referring to
anchors ("billion laughs") grow into gigabytes, and walking the node tree for line
numbers expands them again. This loader refuses any alias (`*name`) while composing,
before anything is expanded or walked, and refuses nesting deeper than `MAX_DEPTH`.
Configs and policies never need aliases: write the value out.
"""

from __future__ import annotations

from typing import Any

import yaml

from oloproof_core.errors import ConfigError

MAX_DEPTH = 64
"""Deepest nesting of mappings and lists accepted in a config or policy."""


class _Refused(yaml.YAMLError):
    def __init__(self, problem: str, mark: Any) -> None:
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = mark


class _StrictLoader(yaml.SafeLoader):
    """A SafeLoader that composes no alias and no node nested deeper than MAX_DEPTH."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise _Refused("aliases (*name) are not allowed; write the value out", event.start_mark)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise _Refused(f"nested deeper than {MAX_DEPTH} levels", mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def yaml_compose(text: str, *, source: str) -> tuple[Any, yaml.Node | None]:
    """(data, root node) of a YAML text; a ConfigError naming `source` and the line if bad."""
    loader = None
    try:
        loader = _StrictLoader(text)
        node = loader.get_single_node()
        data = None if node is None else loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{where}: invalid YAML: {problem}") from None
    except (RecursionError, ValueError, OverflowError) as exc:
        raise ConfigError(f"{source}: invalid YAML: {exc}") from None
    finally:
        if loader is not None:
            loader.dispose()
    return data, node


def yaml_load(text: str, *, source: str) -> Any:
    return yaml_compose(text, source=source)[0]
