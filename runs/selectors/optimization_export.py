"""An optimization's winning texts as a file: JSON or YAML, the same from the dashboard's
download, the REST API, `oloproof winner` and `oloproof.winner_texts`.

The `components` mapping is what a system declares with `@system(components=...)` and
what an optimization config takes under `components:`, so it can be pasted into either;
the other keys say where the texts came from. YAML writes a text of several lines as a
literal block, so a prompt reads as it will be sent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import yaml

from runs.errors import InvalidRequestError

FORMATS = {"json": "application/json", "yaml": "application/yaml"}
"""The formats a winner is written in, with their media types."""


class _BlockDumper(yaml.SafeDumper):
    """Writes a text of several lines as a `|` block; every other value as usual."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # A block cannot carry trailing spaces on a line or some control characters
    # faithfully; such a text keeps the quoted style, which round-trips exactly.
    block = "\n" in value and not re.search(r"[ \t]\n|[^\S\n]$|[\x00-\x08\x0b-\x1f\x7f]", value)
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if block else None)


_BlockDumper.add_representer(str, _text)


def winner_format(format: str | None) -> str:
    """The format asked for (JSON when none is), refused by name when unknown."""
    chosen = (format or "json").lower().lstrip(".")
    if chosen == "yml":
        chosen = "yaml"
    if chosen not in FORMATS:
        raise InvalidRequestError(
            f"unknown format {format!r}: the winner is written as {' or '.join(FORMATS)}"
        )
    return chosen


def winner_document(winner: Mapping[str, Any], *, format: str | None = None) -> str:
    """The winner (`runs.selectors.optimizations.optimization_winner`) as a file's text."""
    if winner_format(format) == "yaml":
        return yaml.dump(
            dict(winner), Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=100
        )
    return json.dumps(dict(winner), indent=2, ensure_ascii=False) + "\n"


def winner_filename(winner: Mapping[str, Any], *, format: str | None = None) -> str:
    """`calc-1+opt3.2.components.yaml`: the system, the winner's release, the format."""
    stem = re.sub(r"[^\w.+-]+", "_", f"{winner.get('system') or 'system'}-{winner['release']}")
    return f"{stem}.components.{winner_format(format)}"
