"""Run configuration files (`oloproof run config.yaml`): parsed, validated, resolved.

Every error names the file, the line and the key, and says what is allowed.
Relative paths and `file.py:name` references resolve from the config file's folder.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from oloproof_core._util.imports import load_object, path_within
from oloproof_core._util.limits import value_problem
from oloproof_core._util.safe_yaml import yaml_compose
from oloproof_core._util.text_files import read_text
from oloproof_core.configs.evaluators import builtin_evaluator, meant
from oloproof_core.configs.fields import (
    KEYS,
    MOST,
    RUN_CONFIG_FIELDS,
    key_problem,
    sandbox_setting,
)
from oloproof_core.datasets.prefetch import prefetch_dataset as read_dataset_ahead
from oloproof_core.errors import ConfigError, DeclarationError, OloproofError
from oloproof_core.evaluation.repeats import AUTO, is_auto
from oloproof_core.judging.evaluators import BUILTIN_EVALUATORS, Evaluator
from oloproof_core.judging.judge import check_criteria


@dataclass(slots=True)
class RunConfig:
    path: str
    system: Any
    dataset: str
    evaluators: list[Evaluator]
    split: str | None = None
    policy: str | None = None
    baseline: str | None = None
    concurrency: int | None = None
    timeout: float | None = None
    confidence: float = 0.95
    isolation: str = "process"
    memory_limit_mb: int | None = None
    sandbox: str | None = None
    evaluator_timeout: float | None = None
    repeats: int | str = 1
    """Runs per case, or "auto" (`evaluation/auto_repeats.py`)."""
    judge_repeats: int = 1
    raw: dict[str, Any] = field(default_factory=dict)


def load_run_config(path: str, *, prefetch_dataset: bool = False) -> RunConfig:
    """The config at `path`, checked and its code declared; `prefetch_dataset`: it is about
    to run here, so its dataset file is read while its code is declared (`datasets.prefetch`)."""
    data, lines = run_config_read(path)
    return run_config_from_mapping(
        data,
        base_dir=os.path.dirname(os.path.abspath(path)),
        label=path,
        lines=lines,
        prefetch_dataset=prefetch_dataset,
    )


def run_config_read(path: str) -> tuple[Any, dict[str, int]]:
    """A config file's parsed YAML and the line of each top-level key (nothing checked)."""
    if not os.path.exists(path):
        raise ConfigError(f"{path}: file not found")
    if not os.path.isfile(path):
        raise ConfigError(f"{path}: not a file")
    text = read_text(path, error=ConfigError, what="the run config")
    data, node = yaml_compose(text, source=path)
    return data, _key_lines(node)


def check_run_config(
    data: Mapping[str, Any], *, label: str, lines: Mapping[str, int] | None = None
) -> dict[str, Any]:
    """Check a config's shape without importing or reading anything it names.

    Unknown and missing keys and values of the wrong kind are errors naming `label`
    (the file, or the request), the line when known, and the key. Returns a plain copy.
    """
    if not isinstance(data, Mapping):
        raise ConfigError(f"{label}: a run config is a mapping of keys: " + ", ".join(KEYS))
    where = _Locator(label, dict(lines or {}))
    fault = key_problem(data)
    if fault is not None:
        raise ConfigError(f"{where(fault[0])}: {fault[1]}")
    for item in RUN_CONFIG_FIELDS:
        if data.get(item.name) is not None:
            _CHECKS[item.kind](data, item.name, where)
        problem = value_problem(data.get(item.name), item.name)
        if problem:
            raise ConfigError(f"{where(item.name)}: {problem}")
    return dict(data)


def run_config_from_mapping(
    data: Mapping[str, Any],
    *,
    base_dir: str,
    label: str,
    lines: Mapping[str, int] | None = None,
    roots: Sequence[str] | None = None,
    here: bool = False,
    prefetch_dataset: bool = False,
) -> RunConfig:
    """Validate and resolve a config already parsed (a submitted run's recorded config).

    `base_dir` plays the config file's folder; `label` names the config in errors. With
    `roots` (a project's registered code roots), every file the config names, and the
    code it imports, must resolve inside one of them. Its code is read in its sandbox;
    `here`: imported in this process instead (see `load_config_code`);
    `prefetch_dataset`: see `load_run_config`.
    """
    data = check_run_config(data, label=label, lines=lines)
    where = _Locator(label, dict(lines or {}))
    base = os.path.abspath(base_dir)
    run_config_paths_check(data, base_dir=base, roots=roots, label=label, lines=lines)
    if prefetch_dataset and data.get("dataset"):
        from oloproof_core.datasets.dataset import load_dataset

        read_dataset_ahead(os.path.join(base, data["dataset"]), load_dataset)

    system, evaluators = load_config_code(
        data, base=base, where=where, roots=roots, here=here, first_process=not here
    )
    for item in (system, *evaluators):
        if isinstance(item, ConfigError):
            raise item
    try:
        check_criteria(evaluators)
    except DeclarationError as exc:  # said here, beside the key, rather than at plan time
        raise ConfigError(f"{where('evaluators')}: {exc}") from None
    return run_config_resolved(data, base=base, label=label, system=system, evaluators=evaluators)


def load_config_code(
    data: Mapping[str, Any],
    *,
    base: str,
    where: _Locator,
    roots: Sequence[str] | None,
    here: bool = False,
    first_process: bool = False,
) -> tuple[Any, list[Any]]:
    """The config's system and evaluators, each loaded or its ConfigError: user code read in
    its sandbox unless `here`; `first_process` for a config about to run here (see
    `oloproof_core.configs.code.load_config_code`)."""
    from oloproof_core.configs.code import load_config_code as load

    def load_entry(entry: Any, index: int) -> Evaluator:
        return _evaluator_from_entry(entry, index, base, where, roots)

    return load(
        data,
        base=base,
        where=where,
        roots=roots,
        load_entry=load_entry,
        here=here,
        first_process=first_process,
    )


def run_config_resolved(
    data: Mapping[str, Any], *, base: str, label: str, system: Any, evaluators: list[Any]
) -> RunConfig:
    """The RunConfig of checked keys whose system and evaluators are loaded, paths from `base`."""

    def local_path(key: str) -> str | None:
        value = data.get(key)
        return os.path.join(base, value) if value else None

    return RunConfig(
        path=label,
        system=system,
        dataset=local_path("dataset") or "",
        evaluators=evaluators,
        split=data.get("split"),
        policy=local_path("policy"),
        baseline=local_path("baseline"),
        concurrency=data.get("concurrency"),
        timeout=data.get("timeout"),
        confidence=float(data.get("confidence", 0.95)),
        isolation=data.get("isolation", "process"),
        memory_limit_mb=data.get("memory_limit_mb"),
        sandbox=sandbox_setting(data.get("sandbox")),
        evaluator_timeout=data.get("evaluator_timeout"),
        repeats=AUTO if is_auto(data.get("repeats")) else data.get("repeats") or 1,
        judge_repeats=data.get("judge_repeats") or 1,
        raw=dict(data),
    )


def run_config_paths(data: Mapping[str, Any], *, base_dir: str) -> list[tuple[str, str]]:
    """(key, absolute path) of the folder and every file a checked config names, unresolved.

    Read without importing anything: the web process checks these against a project's
    code roots before a run is queued; the workers check them again, links resolved.
    """
    base = os.path.abspath(base_dir)
    found = [("base_dir", base)]
    for key in ("dataset", "policy", "baseline"):
        if isinstance(data.get(key), str):
            found.append((key, os.path.join(base, data[key])))
    references = [("system", data.get("system"))]
    references += [
        (f"evaluators[{index}]", entry) for index, entry in enumerate(data.get("evaluators") or [])
    ]
    for key, reference in references:
        if isinstance(reference, str) and ".py" in reference:
            found.append((key, os.path.join(base, reference.partition(":")[0])))
    return found


def run_config_paths_check(
    data: Mapping[str, Any],
    *,
    base_dir: str,
    roots: Sequence[str] | None,
    label: str,
    lines: Mapping[str, int] | None = None,
) -> None:
    """A ConfigError naming the key of the first path outside `roots` (links resolved)."""
    if roots is None:
        return
    where = _Locator(label, dict(lines or {}))
    for key, path in run_config_paths(data, base_dir=base_dir):
        if not path_within(path, roots):
            shown = ", ".join(roots) or "none are registered"
            raise ConfigError(
                f"{where(key.split('[')[0])}: {key} {path} is outside the "
                f"project's registered code roots ({shown})"
            )


class _Locator:
    def __init__(self, path: str, lines: dict[str, int]) -> None:
        self.path = path
        self.lines = lines

    def __call__(self, key: str) -> str:
        line = self.lines.get(key)
        return f"{self.path}:{line}" if line else self.path


def _key_lines(node: Any) -> dict[str, int]:
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {
        key.value: key.start_mark.line + 1
        for key, _ in node.value
        if isinstance(key, yaml.ScalarNode)
    }


def _string(data: Mapping[str, Any], key: str, where: _Locator) -> None:
    value = data[key]
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where(key)}: {key!r} must be a string: {KEYS[key]}")


def _positive(data: Mapping[str, Any], key: str, where: _Locator, *, integer: bool) -> None:
    value = data[key]
    valid = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not valid or not value > 0 or value == float("inf"):
        kind = "whole number" if integer else "number"
        raise ConfigError(
            f"{where(key)}: {key!r} must be a positive {kind}, got {value!r}: {KEYS[key]}"
        )
    most = MOST.get(key)
    if most is not None and value > most:
        raise ConfigError(
            f"{where(key)}: {key!r} must be at most {most} ({KEYS[key]}), got {value}"
        )


def _repeats(data: Mapping[str, Any], key: str, where: _Locator) -> None:
    value = data[key]
    if is_auto(value):
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(
            f"{where(key)}: 'repeats' must be a positive whole number or auto, got "
            f"{value!r}: {KEYS[key]}"
        )
    _positive(data, key, where, integer=True)


def _confidence(data: Mapping[str, Any], key: str, where: _Locator) -> None:
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise ConfigError(
            f"{where(key)}: 'confidence' must be between 0 and 1 (e.g. 0.95), got {value!r}"
        )


def _evaluator_list(data: Mapping[str, Any], key: str, where: _Locator) -> None:
    entries = data[key]
    if not isinstance(entries, list) or not entries:
        raise ConfigError(
            f"{where(key)}: 'evaluators' must be a non-empty list, e.g.\n"
            "  evaluators:\n    - ExactMatch: {criterion: exact_label, "
            "field: label}\n    - my_checks:known_label"
        )


def _isolation(data: Mapping[str, Any], key: str, where: _Locator) -> None:
    if data[key] not in ("process", "thread"):
        raise ConfigError(
            f"{where(key)}: 'isolation' must be 'process' or 'thread' ({KEYS[key]}), "
            f"got {data[key]!r}"
        )


def _sandbox(data: Mapping[str, Any], key: str, where: _Locator) -> None:
    if sandbox_setting(data[key]) not in ("auto", "required", "off"):
        raise ConfigError(
            f"{where(key)}: 'sandbox' must be auto, required or off ({KEYS[key]}), "
            f"got {data[key]!r}"
        )


_CHECKS: dict[str, Callable[[Mapping[str, Any], str, _Locator], None]] = {
    "isolation": _isolation,
    "sandbox": _sandbox,
    "import": _string,
    "path": _string,
    "string": _string,
    "evaluators": _evaluator_list,
    "positive_int": lambda data, key, where: _positive(data, key, where, integer=True),
    "repeats": _repeats,
    "positive_number": lambda data, key, where: _positive(data, key, where, integer=False),
    "confidence": _confidence,
}


def _evaluator_from_entry(
    entry: Any, index: int, base: str, where: _Locator, roots: Sequence[str] | None = None
) -> Evaluator:
    label = f"{where('evaluators')}: evaluators[{index}]"
    builtin_names = ", ".join(BUILTIN_EVALUATORS)
    if isinstance(entry, Mapping) and len(entry) == 1:
        ((name, params),) = entry.items()
        if name not in BUILTIN_EVALUATORS:
            raise ConfigError(
                f"{label}: unknown evaluator {name!r}{meant(name)}; built-in evaluators are "
                f"{builtin_names}, or give an import path 'module:name'"
            )
        return builtin_evaluator(label, name, params)
    if isinstance(entry, str) and entry in BUILTIN_EVALUATORS:
        return builtin_evaluator(label, entry, None)
    if isinstance(entry, str) and entry.endswith(".py") and ":" not in entry:
        # Here, not at the top: a metric file brings the model client, which a run that
        # names none does not load.
        from oloproof_core.judging.evaluators import MetricFile

        try:
            return MetricFile(os.path.join(base, entry))
        except OloproofError as exc:
            raise ConfigError(f"{label}: {exc}") from None
    if isinstance(entry, str) and ":" in entry:
        try:
            found = load_object(entry, base_dir=base, what="evaluator", roots=roots)
        except OloproofError as exc:
            raise ConfigError(f"{label}: {exc}") from None
        if not isinstance(found, Evaluator):
            raise ConfigError(
                f"{label}: {entry!r} is a {type(found).__name__}, not an "
                "evaluator; decorate it with @evaluator(criterion=...)"
            )
        return found
    raise ConfigError(
        f"{label}: cannot read {entry!r}{meant(entry)}; write a built-in evaluator with its "
        f"parameters ({builtin_names}), e.g. '- ExactMatch: {{criterion: "
        "exact_label, field: label}', an import path '- module:name', or a "
        "metric file '- metric.py'"
    )
