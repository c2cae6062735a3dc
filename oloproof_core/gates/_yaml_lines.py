"""YAML with line numbers: the parsed data plus the line of every key and list item.

Policy errors point at `file:line`; `yaml.safe_load` forgets where things were, so
the node tree from `yaml.compose` is walked alongside it to recover the lines.
"""

from __future__ import annotations

from typing import Any

import yaml

from oloproof_core.gates._errors import PolicyError

Path = tuple[str | int, ...]


def load_yaml_with_lines(text: str, source: str) -> tuple[Any, dict[Path, int]]:
    try:
        node = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        problem = getattr(exc, "problem", None) or str(exc)
        raise PolicyError(f"{where}: invalid YAML: {problem}") from None
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
