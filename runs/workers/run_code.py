"""Loading a submitted run's code on a worker: its config, system, evaluators and plan.

Workers import the system and evaluators from the folder recorded with the run, only
if it lies inside one of the run's project's registered code roots, first dropping
that folder's modules from the import cache if their files changed (`runs.workers.user_code`),
so a long-lived worker never judges with stale code.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from django.conf import settings
from django.utils import timezone

import oloproof_core as engine
from runs.errors import NotPermittedError, RunConfigInvalidError
from runs.models import Project, Run
from runs.selectors.earlier_tries import earlier_tries
from runs.selectors.gates import baseline_run_find
from runs.selectors.projects import project_code_roots
from runs.workers.dispatch import worker_name
from runs.workers.user_code import forget_changed_project_code, remember_project_code
from runs.writers.projects import code_root_how


class RunCodeError(Exception):
    """The run's system, evaluators, policy, baseline or dataset could not be loaded here."""


def run_config_load(*, run: Run) -> engine.RunConfig:
    """The run's recorded config, with its system and evaluators imported in this process.

    Only from inside the project's registered code roots (checked again here, links
    resolved: a root may have been removed, or a link changed, since the run was queued).
    """
    config = dict(run.config)
    base_dir = str(config.pop("base_dir", "") or os.getcwd())
    roots = project_code_roots(project_id=run.project_id)
    forget_changed_project_code(base_dir)
    try:
        loaded = engine.run_config_from_mapping(
            config, base_dir=base_dir, label=f"run {run.pk} config", roots=roots
        )
    except engine.SandboxFloorError as exc:
        # Queued where the floor was not set: this worker's operator's floor still holds,
        # before any of the run's code is read.
        raise RunCodeError(f"worker {worker_name()} refused run {run.pk}: {exc}") from exc
    except Exception as exc:
        raise RunCodeError(load_failure(run, exc, base_dir)) from exc
    remember_project_code(base_dir)
    return loaded


def run_config_verify(
    *,
    config: Mapping[str, Any],
    base_dir: str,
    roots: Sequence[str],
    label: str = "config",
    lines: Mapping[str, int] | None = None,
) -> engine.CheckedRunConfig:
    """A config about to be queued, loaded here as a worker will load it, or every fault.

    The one check before a run is queued, whichever face queues it (the New-run form,
    `oloproof run --submit` and `oloproof.submit`, the API): its system and evaluators
    import from `base_dir` inside `roots`, its dataset's rows check as they are read
    (none kept: the checked `DatasetFile` reads them again to record them) and are no
    more than OLOPROOF_MAX_CASES, its policy loads and none of its rules could never pass,
    its run can be planned. Raises RunConfigInvalidError listing each problem with the
    config key it concerns.
    """
    forget_changed_project_code(base_dir)
    try:
        checked = engine.run_config_check(
            config,
            base_dir=base_dir,
            label=label,
            lines=lines,
            roots=roots,
            max_cases=(max_run_cases(), "OLOPROOF_MAX_CASES"),
        )
    except engine.ConfigProblemsError as exc:
        raise RunConfigInvalidError(
            [(problem.key, problem.message) for problem in exc.problems]
        ) from None
    except engine.ConfigError as exc:
        raise RunConfigInvalidError([(None, str(exc))]) from None
    remember_project_code(base_dir)
    return checked


def run_submission_verify(
    *,
    config: Mapping[str, Any],
    base_dir: str,
    project: Project,
    roots: Sequence[str],
    label: str = "config",
    lines: Mapping[str, int] | None = None,
) -> engine.CheckedRunConfig:
    """A config about to be queued in `project`: its folder and files inside the project's
    code roots (NotPermittedError saying how to register one), then `run_config_verify`,
    then its policy's recorded baseline (`run_baseline_verify`)."""
    try:
        engine.run_config_paths_check(
            config, base_dir=base_dir, roots=roots, label=label, lines=lines
        )
    except engine.ConfigError as exc:
        how = code_root_how(project=project, folder=base_dir)
        raise NotPermittedError(f"{exc}. {how}") from None
    checked = run_config_verify(
        config=config, base_dir=base_dir, roots=roots, label=label, lines=lines
    )
    run_baseline_verify(checked=checked, project_id=project.pk)
    if engine.is_auto(checked.config.repeats):
        return replace(checked, dataset=_allocated(checked, project_id=project.pk))
    return checked


def _allocated(checked: engine.CheckedRunConfig, *, project_id: int) -> engine.DatasetFile:
    """`repeats: auto`: the dataset with each case's tries, read from the system's
    latest runs of the same cases finished before this one is queued."""
    earlier = earlier_tries(
        project_id=project_id,
        cases_digest=checked.dataset.digest,
        system_name=str(getattr(checked.config.system, "name", "")),
        source=checked.dataset.source,
        finished_before=timezone.now(),
    )
    return engine.allocated_dataset_file(checked.dataset, earlier)


def run_baseline_verify(*, checked: engine.CheckedRunConfig, project_id: int) -> None:
    """A policy's `release:` baseline is recorded in the project before the run is queued,
    not found missing after its last case. (A `last_approved` one may not exist yet: the
    first release is decided as the policy's `on_first_release` says.)"""
    policy = checked.policy
    spec = None if policy is None else policy.spec.baseline
    if spec is None or spec.kind != "release" or checked.config.baseline is not None:
        return
    if not policy.needs_baseline:
        return
    name, version = spec.looked_up(str(getattr(checked.config.system, "name", "")))
    if baseline_run_find(project_id=project_id, system_name=name, release=version) is None:
        raise RunConfigInvalidError(
            [
                (
                    "policy",
                    f"{spec.where}: no recorded run of {name}@{version} in this project to "
                    "compare against; record one first or point 'baseline' at a result file",
                )
            ]
        )


def max_run_cases() -> int:
    """The most cases a submitted run may have (the setting OLOPROOF_MAX_CASES)."""
    return int(getattr(settings, "OLOPROOF_MAX_CASES", engine.MAX_RUN_CASES))


def run_plan_load(
    *, run: Run, config: engine.RunConfig | None = None
) -> tuple[engine.RunPlan, engine.RunConfig]:
    config = config or run_config_load(run=run)
    try:
        plan = engine.plan_run(
            system=config.system,
            evaluators=config.evaluators,
            policy=config.policy,
            concurrency=config.concurrency,
            timeout=config.timeout,
            evaluator_timeout=config.evaluator_timeout,
            confidence=config.confidence,
            isolation=config.isolation,
            memory_limit_mb=config.memory_limit_mb,
            sandbox=config.sandbox,
            repeats=config.repeats,
            judge_repeats=config.judge_repeats,
        )
    except engine.SandboxFloorError as exc:
        # Queued where the floor was not set: this worker's operator's floor still holds.
        raise RunCodeError(f"worker {worker_name()} refused run {run.pk}: {exc}") from exc
    except Exception as exc:
        base_dir = str(run.config.get("base_dir", ""))
        raise RunCodeError(load_failure(run, exc, base_dir)) from exc
    if config.dataset:  # the answers' file may lie beside the code: the sandbox hides it
        plan.hidden_paths = (*plan.hidden_paths, config.dataset)
    return plan, config


def run_dataset_load(*, run: Run, config: engine.RunConfig) -> engine.Dataset:
    """The run's dataset, each case as many times as its config repeats it."""
    try:
        data = engine.load_dataset(config.dataset, split=config.split)
        if engine.is_auto(config.repeats):  # the allocation as it stood when it was queued
            earlier = earlier_tries(
                project_id=run.project_id,
                cases_digest=data.digest,
                system_name=str(getattr(config.system, "name", "")),
                source=data.source,
                finished_before=run.created_at,
            )
            return engine.tried_dataset(
                data, engine.allocate((row.id for row in data.rows), earlier.tries)
            )
        return engine.repeated_dataset(data, int(config.repeats))
    except Exception as exc:
        raise RunCodeError(
            f"worker {worker_name()} could not load the dataset of run {run.pk}: {exc}"
        ) from exc


def load_failure(run: Run, exc: BaseException, base_dir: str) -> str:
    # The last frame says where user code broke on import (a SyntaxError, a missing
    # dependency); the message names the reference that could not be loaded.
    where = traceback.format_exception_only(exc)[-1].strip()
    return (
        f"worker {worker_name()} could not load the code of run {run.pk} "
        f"(system {run.config.get('system')!r}, base_dir {base_dir!r}): {where}"
    )
