"""Optimization configs (`oloproof optimize optimize.yaml`): the run-config keys and more.

    system: support_bot.py:answer          # a system with components, or a dspy.Module
    dataset: data/cases.jsonl
    evaluators: [metric.py]
    components:                            # the seed texts (default: the system's own)
      system_prompt: {file: prompt.txt}
    engine: auto                           # gepa, dspy-gepa or auto
    budget: {metric_calls: 300, usd: 2.0, wall_time_s: 900}
    splits: {train: 0.5, val: 0.25, test: 0.25}   # only for datasets without splits
    policy: release.yaml                   # gates the winner on test

The API, the dashboard's form and the workers check configs with the same
`check_optimize_config`, which reads nothing it names.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from oloproof_core._util.text_files import read_text
from oloproof_core.configs.fields import RUN_CONFIG_FIELDS, RunConfigField
from oloproof_core.configs.run_config import check_run_config, run_config_from_mapping
from oloproof_core.errors import ConfigError
from oloproof_core.evaluation.repeats import counted_repeats
from oloproof_core.optimize._budget import Budget
from oloproof_core.optimize._spec import OptimizationSpec
from oloproof_core.optimize._splits import check_fractions

ENGINE_CHOICES = ("auto", "gepa", "dspy-gepa")
_RUN_KEYS = tuple(item.name for item in RUN_CONFIG_FIELDS if item.name not in ("split", "baseline"))
OPTIMIZE_CONFIG_FIELDS: tuple[RunConfigField, ...] = (
    *(item for item in RUN_CONFIG_FIELDS if item.name in _RUN_KEYS),
    RunConfigField("engine", "gepa, dspy-gepa or auto (the default)", "string"),
    RunConfigField(
        "budget", "limits: metric_calls, usd, wall_time_s (at least one)", "mapping", required=True
    ),
    RunConfigField(
        "components", "seed texts by component name (a text, or {file: path})", "mapping"
    ),
    RunConfigField(
        "splits", "fractions {train, val, test} for a dataset without splits", "mapping"
    ),
    RunConfigField("objective", "the criterion the search raises (default: the first)", "string"),
    RunConfigField(
        "settings", "engine settings (minibatch_size, candidate_selection, use_merge)", "mapping"
    ),
    RunConfigField("seed", "random seed of the search (positive integer)", "positive_int"),
    RunConfigField("name", "the release name of a DSPy program", "string"),
    RunConfigField("version", "the base version of a DSPy program", "string"),
)
KEYS = {item.name: item.meaning for item in OPTIMIZE_CONFIG_FIELDS}


def check_optimize_config(data: Mapping[str, Any], *, label: str) -> dict[str, Any]:
    """Check an optimization config's shape without importing or reading what it names."""
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"{label}: an optimization config is a mapping of keys: " + ", ".join(KEYS)
        )
    for key in data:
        if key not in KEYS:
            allowed = "\n".join(f"  {name}: {meaning}" for name, meaning in KEYS.items())
            raise ConfigError(f"{label}: unknown key {key!r}; allowed keys:\n{allowed}")
    check_run_config({key: data[key] for key in data if key in _RUN_KEYS}, label=label)
    try:
        Budget.from_mapping(data.get("budget"))
        check_fractions(data.get("splits"))
        _check_rest(data)
    except ConfigError as exc:
        raise ConfigError(f"{label}: {exc}") from None
    return dict(data)


def _check_rest(data: Mapping[str, Any]) -> None:
    engine = data.get("engine", "auto")
    if engine not in ENGINE_CHOICES:
        raise ConfigError(
            f"engine: {engine!r} is not an engine; engines are " + ", ".join(ENGINE_CHOICES)
        )
    for key in ("components", "settings"):
        if data.get(key) is not None and not isinstance(data[key], Mapping):
            raise ConfigError(f"{key}: {KEYS[key]}")
    for name, text in (data.get("components") or {}).items():
        if not isinstance(text, str) and not (isinstance(text, Mapping) and set(text) == {"file"}):
            raise ConfigError(f"components: {name!r} is a text or {{file: path}}, got {text!r}")


def load_optimize_config(path: str) -> OptimizationSpec:
    if not os.path.exists(path):
        raise ConfigError(f"{path}: file not found")
    text = read_text(path, error=ConfigError, what="the optimization config")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML: {getattr(exc, 'problem', exc)}") from None
    return optimize_spec_from_mapping(
        data, base_dir=os.path.dirname(os.path.abspath(path)), label=path
    )


def optimize_spec_from_mapping(
    data: Mapping[str, Any], *, base_dir: str, label: str, dspy_here: bool = True
) -> OptimizationSpec:
    """Check and resolve a config (a file's, or a submitted optimization's recorded one).

    A DSPy program is imported in this process, as DSPy's optimizers call it and its
    metric here; `dspy_here=False` (a worker whose operator has not allowed it) refuses
    that before anything of the config's code runs here.
    """
    data = check_optimize_config(data, label=label)
    run_data = {key: data[key] for key in data if key in _RUN_KEYS}
    run = run_config_from_mapping(run_data, base_dir=base_dir, label=label)
    if getattr(run.system, "is_dspy_program", False):
        if not dspy_here:
            raise ConfigError(
                f"{label}: system: {data['system']} is a DSPy program, which is optimized in "
                "the optimizing process (DSPy's optimizers call it there, outside any "
                "sandbox), and this worker's operator has not allowed that: "
                "OLOPROOF_DSPY_IN_PROCESS=allow on the worker does (docs/isolation.md)"
            )
        run = run_config_from_mapping(run_data, base_dir=base_dir, label=label, here=True)
    return OptimizationSpec(
        system=run.system,
        dataset=run.dataset,
        evaluators=run.evaluators,
        budget=Budget.from_mapping(data["budget"]),
        engine=str(data.get("engine", "auto")),
        components=_components(data.get("components"), base_dir, label),
        splits=data.get("splits"),
        objective=data.get("objective"),
        policy=run.policy,
        concurrency=run.concurrency,
        timeout=run.timeout,
        confidence=run.confidence,
        repeats=counted_repeats(run.repeats, label),
        judge_repeats=run.judge_repeats,
        seed=int(data.get("seed", 0)),
        settings=dict(data.get("settings") or {}),
        name=data.get("name"),
        version=data.get("version"),
        config=dict(data),
        sandbox=run.sandbox,
        memory_limit_mb=run.memory_limit_mb,
    )


def _components(
    given: Mapping[str, Any] | None, base_dir: str, label: str
) -> dict[str, str] | None:
    if not given:
        return None
    texts = {}
    for name, text in given.items():
        if isinstance(text, Mapping):
            path = os.path.join(base_dir, str(text["file"]))
            text = read_text(path, error=_component_error(label, name), what="its text")
        texts[name] = text
    return texts


def _component_error(label: str, name: str) -> Callable[[str], ConfigError]:
    return lambda said: ConfigError(f"{label}: components: {name!r}: {said}")
