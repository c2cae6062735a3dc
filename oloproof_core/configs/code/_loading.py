"""A run config's system and evaluators: user code read in its sandbox, built-ins here."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from oloproof_core._util.imports import load_object
from oloproof_core.configs.code._declaring import ProbeSettings, declare_config_code
from oloproof_core.configs.fields import sandbox_setting
from oloproof_core.errors import ConfigError, OloproofError
from oloproof_core.execution.isolation import sandbox_mode
from oloproof_core.judging.evaluators import BUILTIN_EVALUATORS, Evaluator


def load_config_code(
    data: Mapping[str, Any],
    *,
    base: str,
    where: Callable[[str], str],
    roots: Sequence[str] | None,
    load_entry: Callable[[Any, int], Evaluator],
    here: bool = False,
    first_process: bool = False,
) -> tuple[Any, list[Any]]:
    """The config's system and evaluators, each loaded or the ConfigError saying why not.

    User code is read in its sandbox, never imported here, unless the config asks
    `isolation: thread` or the caller needs the code itself (`here`: DSPy's optimizers
    call a program in their own process). The operator's floor is applied first
    (SandboxFloorError), so a refused config runs nothing anywhere. `load_entry` loads
    one evaluator entry here (a built-in; any entry when the code is imported here).
    `first_process`: the config is about to run here, so the system's declaring process
    waits to become its pool's first (`declare_config_code`).
    """
    isolation = data.get("isolation", "process")
    mode = sandbox_mode(sandbox_setting(data.get("sandbox")), isolation)
    entries = list(data["evaluators"])
    if isolation == "thread" or here:
        if here and mode == "required":
            raise ConfigError(
                "a DSPy program is optimized in oloproof's process (DSPy's optimizers call "
                "it there), which this machine's OLOPROOF_SANDBOX=required does not allow"
            )
        system = _loaded_or_error(
            lambda: load_object(data["system"], base_dir=base, what="system", roots=roots),
            where("system"),
        )
        declared: dict[int, Any] = {}
    else:
        user = {index: entry for index, entry in enumerate(entries) if _is_user_code(entry)}
        hidden = [os.path.join(base, data[key]) for key in ("dataset", "baseline") if data.get(key)]
        settings = ProbeSettings(base, roots, mode, hidden, data.get("memory_limit_mb"))
        code = declare_config_code(
            settings, system=data["system"], evaluators=user, first_process=first_process
        )
        system = code.system or ConfigError(f"{where('system')}: {code.system_error}")
        declared = code.evaluators
    return system, _evaluators(entries, declared, where, load_entry)


def _evaluators(
    entries: list[Any],
    declared: Mapping[int, Any],
    where: Callable[[str], str],
    load_entry: Callable[[Any, int], Evaluator],
) -> list[Any]:
    """Each entry's evaluator: as declared in the sandbox, or loaded here (a built-in)."""
    evaluators = []
    for index, entry in enumerate(entries):
        found = declared.get(index)
        if found is None:
            found = _loaded_or_error(functools.partial(load_entry, entry, index), None)
        elif isinstance(found, str):
            found = ConfigError(f"{where('evaluators')}: evaluators[{index}]: {found}")
        evaluators.append(found)
    return evaluators


def _is_user_code(entry: Any) -> bool:
    """A metric file or a `module:name`: code that runs when it is imported."""
    code = isinstance(entry, str) and (":" in entry or entry.endswith(".py"))
    return code and entry not in BUILTIN_EVALUATORS


def _loaded_or_error(load: Callable[[], Any], where: str | None) -> Any:
    try:
        return load()
    except ConfigError as exc:
        return exc if where is None else ConfigError(f"{where}: {exc}")
    except OloproofError as exc:
        return ConfigError(f"{where}: {exc}" if where else str(exc))
