"""Run configuration files (`oloproof run config.yaml`): parsed, validated, resolved.

Every error names the file, the line and the key, and says what is allowed.
Relative paths and `file.py:name` references resolve from the config file's folder.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml

from oloproof_core.errors import ConfigError, OloproofError
from oloproof_core.evaluators import BUILTIN_EVALUATORS, Evaluator, MetricFile
from oloproof_core.imports import load_object


@dataclass(frozen=True, slots=True)
class RunConfigField:
    """One key of a run config: what it means and what shape its value takes.

    The one statement of the run-config schema: the command line, the REST API, the
    dashboard's New-run form and the workers all read and check configs through it.
    """

    name: str
    meaning: str
    kind: Literal["import", "path", "evaluators", "string", "positive_int", "positive_number",
                  "confidence"]
    required: bool = False


RUN_CONFIG_FIELDS: tuple[RunConfigField, ...] = (
    RunConfigField("system", "import path of the system, e.g. support_bot:answer or bot.py:answer",
                   "import", required=True),
    RunConfigField("dataset", "path to a .jsonl, .json or .csv dataset", "path", required=True),
    RunConfigField("evaluators", "list of evaluators", "evaluators", required=True),
    RunConfigField("split", "only the rows of this split", "string"),
    RunConfigField("policy", "path to a release policy (release.yaml)", "path"),
    RunConfigField("baseline", "the baseline run for paired rules (a result JSON file)", "path"),
    RunConfigField("concurrency", "how many cases run at once (positive integer)",
                   "positive_int"),
    RunConfigField("timeout", "per-case timeout in seconds (positive number)", "positive_number"),
    RunConfigField("confidence", "confidence level of the intervals, between 0 and 1",
                   "confidence"),
)
KEYS: dict[str, str] = {item.name: item.meaning for item in RUN_CONFIG_FIELDS}
REQUIRED = tuple(item.name for item in RUN_CONFIG_FIELDS if item.required)


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
    raw: dict[str, Any] = field(default_factory=dict)


def load_run_config(path: str) -> RunConfig:
    if not os.path.exists(path):
        raise ConfigError(f"{path}: file not found")
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    try:
        node = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"{path}:{mark.line + 1}" if mark is not None else path
        raise ConfigError(f"{at}: invalid YAML: {getattr(exc, 'problem', exc)}") from None
    return run_config_from_mapping(data, base_dir=os.path.dirname(os.path.abspath(path)),
                                   label=path, lines=_key_lines(node))


def check_run_config(data: Mapping[str, Any], *, label: str,
                     lines: Mapping[str, int] | None = None) -> dict[str, Any]:
    """Check a config's shape without importing or reading anything it names.

    Unknown and missing keys and values of the wrong kind are errors naming `label`
    (the file, or the request), the line when known, and the key. Returns a plain copy.
    """
    if not isinstance(data, Mapping):
        raise ConfigError(f"{label}: a run config is a mapping of keys: " + ", ".join(KEYS))
    where = _Locator(label, dict(lines or {}))
    for key in data:
        if key not in KEYS:
            allowed = "\n".join(f"  {name}: {meaning}" for name, meaning in KEYS.items())
            raise ConfigError(f"{where(str(key))}: unknown key {key!r}; allowed keys:\n{allowed}")
    for key in REQUIRED:
        if key not in data:
            raise ConfigError(f"{label}: missing key {key!r} ({KEYS[key]})")
    for item in RUN_CONFIG_FIELDS:
        if data.get(item.name) is not None:
            _CHECKS[item.kind](data, item.name, where)
    return dict(data)


def run_config_from_mapping(data: Mapping[str, Any], *, base_dir: str, label: str,
                            lines: Mapping[str, int] | None = None) -> RunConfig:
    """Validate and resolve a config already parsed (a submitted run's recorded config).

    `base_dir` plays the config file's folder; `label` names the config in errors.
    """
    data = check_run_config(data, label=label, lines=lines)
    where = _Locator(label, dict(lines or {}))
    base = os.path.abspath(base_dir)

    def local_path(key: str) -> str | None:
        value = data.get(key)
        return None if value is None else os.path.join(base, value)

    try:
        system = load_object(data["system"], base_dir=base, what="system")
    except OloproofError as exc:
        raise ConfigError(f"{where('system')}: {exc}") from None
    evaluators = [_evaluator_from_entry(entry, index, base, where)
                  for index, entry in enumerate(data["evaluators"])]
    return RunConfig(
        path=label, system=system, dataset=local_path("dataset") or "", evaluators=evaluators,
        split=data.get("split"), policy=local_path("policy"), baseline=local_path("baseline"),
        concurrency=data.get("concurrency"), timeout=data.get("timeout"),
        confidence=float(data.get("confidence", 0.95)), raw=data,
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
    return {key.value: key.start_mark.line + 1 for key, _ in node.value
            if isinstance(key, yaml.ScalarNode)}


def _string(data: Mapping[str, Any], key: str, where: _Locator) -> None:
    value = data[key]
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where(key)}: {key!r} must be a string: {KEYS[key]}")


def _positive(data: Mapping[str, Any], key: str, where: _Locator, *, integer: bool) -> None:
    value = data[key]
    valid = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not valid or not value > 0 or value == float("inf"):
        raise ConfigError(f"{where(key)}: {key!r} must be a {KEYS[key]}, got {value!r}")


def _confidence(data: Mapping[str, Any], key: str, where: _Locator) -> None:
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise ConfigError(f"{where(key)}: 'confidence' must be between 0 and 1 "
                          f"(e.g. 0.95), got {value!r}")


def _evaluator_list(data: Mapping[str, Any], key: str, where: _Locator) -> None:
    entries = data[key]
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{where(key)}: 'evaluators' must be a non-empty list, e.g.\n"
                          "  evaluators:\n    - ExactMatch: {criterion: exact_label, "
                          "field: label}\n    - my_checks:known_label")


_CHECKS: dict[str, Callable[[Mapping[str, Any], str, _Locator], None]] = {
    "import": _string,
    "path": _string,
    "string": _string,
    "evaluators": _evaluator_list,
    "positive_int": lambda data, key, where: _positive(data, key, where, integer=True),
    "positive_number": lambda data, key, where: _positive(data, key, where, integer=False),
    "confidence": _confidence,
}


def _evaluator_from_entry(entry: Any, index: int, base: str, where: _Locator) -> Evaluator:
    label = f"{where('evaluators')}: evaluators[{index}]"
    builtin_names = ", ".join(BUILTIN_EVALUATORS)
    if isinstance(entry, Mapping) and len(entry) == 1:
        (name, params), = entry.items()
        if name not in BUILTIN_EVALUATORS:
            raise ConfigError(f"{label}: unknown evaluator {name!r}; built-in evaluators are "
                              f"{builtin_names}, or give an import path 'module:name'")
        if params is not None and not isinstance(params, Mapping):
            raise ConfigError(f"{label}: parameters of {name} must be a mapping")
        try:
            return BUILTIN_EVALUATORS[name](**dict(params or {}))
        except TypeError as exc:
            raise ConfigError(f"{label}: {name}: {exc}") from None
        except OloproofError as exc:
            raise ConfigError(f"{label}: {exc}") from None
    if isinstance(entry, str) and entry in BUILTIN_EVALUATORS:
        return BUILTIN_EVALUATORS[entry]()
    if isinstance(entry, str) and entry.endswith(".py") and ":" not in entry:
        try:
            return MetricFile(os.path.join(base, entry))
        except OloproofError as exc:
            raise ConfigError(f"{label}: {exc}") from None
    if isinstance(entry, str) and ":" in entry:
        try:
            found = load_object(entry, base_dir=base, what="evaluator")
        except OloproofError as exc:
            raise ConfigError(f"{label}: {exc}") from None
        if not isinstance(found, Evaluator):
            raise ConfigError(f"{label}: {entry!r} is a {type(found).__name__}, not an "
                              "evaluator; decorate it with @evaluator(criterion=...)")
        return found
    raise ConfigError(f"{label}: cannot read {entry!r}; write a built-in evaluator with its "
                      f"parameters ({builtin_names}), e.g. '- ExactMatch: {{criterion: "
                      "exact_label, field: label}', an import path '- module:name', or a "
                      "metric file '- metric.py'")
