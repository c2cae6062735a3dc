"""A run config checked as deeply as a worker will load it, every problem at once.

`check_run_config` checks the shape only. Before a run is queued, this also imports
the system and the evaluators from the config's folder, checks the dataset's rows as
they are read (keeping none: `oloproof_core.datasets.file`), loads the policy (refusing
rules that could never pass on these evaluators) and the baseline, and plans the run
with the same `plan_run` the workers call. It collects every problem, each with the key
it concerns, rather than stopping at the first, so a form can show each beside its
field and a command line all together.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from oloproof_core._util.limits import run_cases_problem
from oloproof_core.configs.fields import sandbox_setting
from oloproof_core.configs.files import files_hint
from oloproof_core.configs.run_config import (
    RunConfig,
    _Locator,
    check_run_config,
    load_config_code,
    run_config_resolved,
)
from oloproof_core.datasets.file import DatasetFile, check_dataset_file
from oloproof_core.errors import ConfigError, DeclarationError, OloproofError, SandboxFloorError
from oloproof_core.evaluation.auto_repeats import AUTO_MOST
from oloproof_core.evaluation.plan import plan_run
from oloproof_core.evaluation.repeats import AUTO_SEQUENTIAL, is_auto, repeated_dataset_file
from oloproof_core.judging.evaluators import Evaluator
from oloproof_core.results.reading import load_result

_T = TypeVar("_T")
_DATASET_SUFFIXES = (".jsonl", ".json", ".csv")


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    """One thing wrong with a config: the key it concerns (None: the whole config)."""

    key: str | None
    message: str


class ConfigProblemsError(ConfigError):
    """Every problem found in a run config; its text lists them one per line."""

    def __init__(self, problems: Sequence[ConfigProblem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(problem.message for problem in self.problems))


@dataclass(slots=True)
class CheckedRunConfig:
    """A config whose code imported, whose dataset checked and whose run could be planned."""

    config: RunConfig
    dataset: DatasetFile
    """The dataset checked row by row without holding its rows (`DatasetFile.rows` reads
    them again), so a million-case dataset is queued in bounded memory; each case as many
    times as the config repeats it (`repeated_dataset_file`)."""
    policy: Any = None
    """The loaded policy (a `Policy`), or None when the config names none."""


def run_config_check(
    data: Mapping[str, Any],
    *,
    base_dir: str,
    label: str,
    lines: Mapping[str, int] | None = None,
    roots: Sequence[str] | None = None,
    max_cases: tuple[int, str] | None = None,
) -> CheckedRunConfig:
    """The config loaded as a worker would load it, or ConfigProblemsError naming each fault.

    A config of the wrong shape raises that ConfigError first (nothing is imported
    for it). Relative paths resolve from `base_dir`; with `roots`, code and files
    must lie inside them. `max_cases`: the most cases a run may have and the name of
    the setting that says so; a larger dataset is one of the problems.
    """
    shaped = check_run_config(data, label=label, lines=lines)
    where = _Locator(label, dict(lines or {}))
    base = os.path.abspath(base_dir)
    problems: list[ConfigProblem] = []

    def attempt(key: str | None, load: Callable[[], _T]) -> _T | None:
        try:
            return load()
        except (OloproofError, ValueError) as exc:
            problems.append(ConfigProblem(key, str(exc)))
            return None

    system, evaluators = _code(shaped, base, where, roots)
    for index, item in enumerate((system, *evaluators)):
        if isinstance(item, ConfigError):
            problems.append(ConfigProblem("evaluators" if index else "system", str(item)))
    evaluators = [item for item in evaluators if not isinstance(item, ConfigError)]
    dataset = attempt("dataset", lambda: _dataset(shaped, base, where, max_cases))
    policy = None
    if shaped.get("policy"):
        policy = attempt("policy", lambda: _policy(shaped, base, where))
    if shaped.get("baseline"):
        attempt("baseline", lambda: load_result(os.path.join(base, shaped["baseline"])))
    if policy is not None and policy.sequential and is_auto(shaped.get("repeats")):
        problems.append(ConfigProblem("repeats", f"{where('repeats')}: {AUTO_SEQUENTIAL}"))
    loaded = evaluators
    if policy is not None and len(loaded) == len(shaped["evaluators"]):
        attempt("policy", lambda: _never_passing(policy, loaded, where))
    if not problems:
        _plan(shaped, system, loaded, policy, where, problems)
    if problems or dataset is None:
        raise ConfigProblemsError(problems)
    config = run_config_resolved(shaped, base=base, label=label, system=system, evaluators=loaded)
    return CheckedRunConfig(config=config, dataset=dataset, policy=policy)


def _code(
    data: Mapping[str, Any], base: str, where: _Locator, roots: Sequence[str] | None
) -> tuple[Any, list[Any]]:
    """The config's system and evaluators, each loaded or its ConfigError; the operator's
    floor is the one problem reported alone, beside the key that lowers it."""
    try:
        return load_config_code(data, base=base, where=where, roots=roots)
    except SandboxFloorError as exc:
        raise ConfigProblemsError([ConfigProblem(exc.key, f"{where(exc.key)}: {exc}")]) from None


def _within(
    dataset: DatasetFile,
    max_cases: tuple[int, str] | None,
    data: Mapping[str, Any],
    where: _Locator,
) -> DatasetFile:
    problem = None if max_cases is None else run_cases_problem(len(dataset), *max_cases)
    if problem is not None:
        split = f" (split {data['split']!r})" if data.get("split") else ""
        repeats = data.get("repeats") or 1
        if is_auto(repeats):
            split += f" run up to {AUTO_MOST} times per case (repeats: auto)"
        elif repeats > 1:
            split += f" run {repeats} times per case"
        raise ConfigError(f"{where('dataset')}: dataset {data['dataset']!r}{split} {problem}")
    return dataset


def _dataset(
    data: Mapping[str, Any], base: str, where: _Locator, max_cases: tuple[int, str] | None
) -> DatasetFile:
    path = os.path.join(base, data["dataset"])
    if not os.path.isfile(path):
        raise ConfigError(
            f"{where('dataset')}: dataset {data['dataset']!r} not found: looked for {path} "
            f"(relative paths resolve from {base}){files_hint(path, _DATASET_SUFFIXES)}"
        )
    checked = check_dataset_file(path, split=data.get("split"))
    if is_auto(data.get("repeats")):
        # The store allocates the tries (`allocated_dataset_file`); at most the most each.
        _within(repeated_dataset_file(checked, AUTO_MOST), max_cases, data, where)
        return checked
    return _within(repeated_dataset_file(checked, data.get("repeats") or 1), max_cases, data, where)


def _policy(data: Mapping[str, Any], base: str, where: _Locator) -> Any:
    from oloproof_core.gates import load_policy

    path = os.path.join(base, data["policy"])
    if not os.path.isfile(path):
        raise ConfigError(
            f"{where('policy')}: policy {data['policy']!r} not found: looked for {path} "
            f"(relative paths resolve from {base})"
        )
    policy = load_policy(path)
    spec = policy.spec.baseline
    if spec is not None and spec.kind == "run" and not data.get("baseline"):
        # The policy's own baseline file loads now, not after the run's last case (a
        # release or the last approved run is looked up where the runs are recorded).
        policy.baseline_before_run("", None)
    return policy


def _never_passing(policy: Any, evaluators: list[Evaluator], where: _Locator) -> None:
    """Rules that no run could pass on these evaluators' ranges, refused before any case."""
    from oloproof_core.gates import PolicyError

    try:
        ranges = {item.criterion: tuple(item.score_range) for item in evaluators}
        policy.check_declared(ranges)
    except PolicyError as exc:
        raise ConfigError(f"{where('policy')}: {exc}") from None


def _plan(
    data: Mapping[str, Any],
    system: Any,
    evaluators: list[Evaluator],
    policy: Any,
    where: _Locator,
    problems: list[ConfigProblem],
) -> None:
    """What the workers' `plan_run` refuses: repeated criteria, never-passing rules, limits,
    and (where this process's OLOPROOF_SANDBOX is required) a lowered sandbox."""
    from oloproof_core.gates import PolicyError

    try:
        plan = plan_run(
            system=system,
            evaluators=evaluators,
            policy=policy,
            concurrency=data.get("concurrency"),
            timeout=data.get("timeout"),
            confidence=float(data.get("confidence", 0.95)),
            isolation=data.get("isolation", "process"),
            memory_limit_mb=data.get("memory_limit_mb"),
            sandbox=sandbox_setting(data.get("sandbox")),
            evaluator_timeout=data.get("evaluator_timeout"),
            repeats=data.get("repeats") or 1,
        )
    except PolicyError as exc:
        problems.append(ConfigProblem("policy", f"{where('policy')}: {exc}"))
        return
    except DeclarationError as exc:
        problems.append(ConfigProblem("evaluators", f"{where('evaluators')}: {exc}"))
        return
    except SandboxFloorError as exc:  # the operator's floor, beside the key that lowers it
        problems.append(ConfigProblem(exc.key, f"{where(exc.key)}: {exc}"))
        return
    except (OloproofError, ValueError, TypeError) as exc:
        problems.append(ConfigProblem("system", f"{where('system')}: {exc}"))
        return
    policy = plan.policy
    # A policy may name its own baseline; without one a no_regression rule cannot decide.
    undeclared = policy is not None and policy.spec.baseline is None
    if undeclared and policy.needs_baseline and not data.get("baseline"):
        problems.append(
            ConfigProblem(
                "baseline",
                f"{where('policy')}: the policy has a no_regression rule, which needs a "
                "baseline: give baseline (a result JSON file) or add "
                "'baseline: {last_approved: true}' to the policy",
            )
        )
