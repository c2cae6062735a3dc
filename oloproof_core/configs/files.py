"""The files a run config names (dataset, policy, baseline), looked for before anything runs.

Relative paths in a config resolve from the config's own folder, not from where the
command was started, so a missing file is reported with the key and line that name it,
the path looked for, that folder, and the close matches found there.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from typing import Any

from oloproof_core.configs.run_config import _Locator, check_run_config, run_config_read
from oloproof_core.errors import ConfigError

_SUFFIXES = {
    "dataset": (".jsonl", ".ndjson", ".json", ".csv"),
    "policy": (".yaml", ".yml"),
    "baseline": (".json",),
}


def config_file_problem(data: Mapping[str, Any], *, base: str) -> tuple[str, str] | None:
    """(key, what is wrong) for the first file the config names that is not there."""
    for key, suffixes in _SUFFIXES.items():
        given = data.get(key)
        if not isinstance(given, str) or not given:
            continue
        path = os.path.join(base, given)
        if os.path.isfile(path):
            continue
        if os.path.isdir(path):
            inside = files_hint(os.path.join(path, ""), suffixes).replace(" there", " in it")
            return key, f"{key} {given!r} is a folder ({path}), not a file{inside}"
        return key, (
            f"{key} {given!r} not found: looked for {path} (relative paths resolve from "
            f"the config's folder {base}){files_hint(path, suffixes)}"
        )
    return None


def files_hint(path: str, suffixes: tuple[str, ...]) -> str:
    """The close matches among the files with `suffixes` next to where one was expected."""
    folder = os.path.dirname(path)
    try:
        names = [name for name in os.listdir(folder) if name.lower().endswith(suffixes)]
    except OSError:
        return f"; the folder {folder} does not exist"
    close = difflib.get_close_matches(os.path.basename(path), names, n=3)
    if close:
        return "; did you mean " + " or ".join(repr(name) for name in close) + "?"
    if names:
        return f"; {'/'.join(suffixes)} files there: " + ", ".join(sorted(names)[:10])
    return f"; that folder holds no {'/'.join(suffixes)} file"


def config_files_check(path: str) -> None:
    """A ConfigError naming the key and line of the first file the run config at `path`
    names that is not there; before its code is loaded, so a typo costs no sandbox."""
    data, lines = run_config_read(path)
    base = os.path.dirname(os.path.abspath(path))
    missing = config_file_problem(check_run_config(data, label=path, lines=lines), base=base)
    if missing is not None:
        raise ConfigError(f"{_Locator(path, lines)(missing[0])}: {missing[1]}")
