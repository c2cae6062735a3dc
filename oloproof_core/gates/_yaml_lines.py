"""YAML with line numbers: the parsed data plus the line of every key and list item.

Policy errors point at `file:line`; the data forgets where things were, so the node
tree (composed once, without aliases: `oloproof_core._util.safe_yaml`) is walked to recover
the lines.
"""

from __future__ import annotations

from typing import Any

import yaml

from oloproof_core._util.limits import value_problem
from oloproof_core._util.safe_yaml import yaml_compose
from oloproof_core.errors import ConfigError
from oloproof_core.gates._errors import PolicyError

Path = tuple[str | int, ...]


def load_yaml_with_lines(text: str, source: str) -> tuple[Any, dict[Path, int]]:
    """The data and the line of every key; aliases and deep nesting are refused first."""
    try:
        data, node = yaml_compose(text, source=source)
    except ConfigError as exc:
        raise PolicyError(str(exc)) from None
    problem = value_problem(_plain(data), numbers=False)
    if problem:
        raise PolicyError(f"{source}: {problem}")
    lines: dict[Path, int] = {}
    if node is not None:
        _walk(node, (), lines)
    return data, lines


def _walk(node: yaml.Node, path: Path, lines: dict[Path, int]) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                child = (*path, key.value)
                lines[child] = key.start_mark.line + 1
                _walk(value, child, lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, (*path, index), lines)


def _plain(data: Any) -> Any:
    """YAML scalars JSON has no word for (dates) become text; NaN and NUL are kept to refuse."""
    if isinstance(data, dict):
        return {str(key): _plain(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_plain(item) for item in data]
    if isinstance(data, (str, int, float, bool)) or data is None:
        return data
    return str(data)
