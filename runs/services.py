"""Actions on the runs app, one function per action, keyword-only (`<entity>_<action>`).

Queueing a run, deciding a gate and revoking a decision. The rows of a run
itself are written by `runs.writers.recording`, projects and code roots by `runs.writers.projects`,
API tokens by `runs.writers.tokens`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import User as Account
from django.db import IntegrityError, transaction

import oloproof_core as engine
import oloproof_core.optimize as optimize
from runs.access import (
    LOCAL,
    Actor,
    Role,
    account_of,
    role_require,
    run_for,
    submit_project_pick,
    submitted_by_self,
)
from runs.errors import (
    ConflictError,
    InvalidRequestError,
    NotPermittedError,
    OverrideNeededError,
    OverrideReasonMissingError,
    RunConfigInvalidError,
)
from runs.models import Approval, ApprovalRevocation, Gate, Optimization, Project, Release, Run
from runs.selectors.projects import project_code_roots
from runs.selectors.runs import LIVE_STATUSES
from runs.workers.chunks import chunks_create
from runs.workers.dispatch import Enqueue, chunk_size, send_work_on_commit
from runs.workers.run_code import run_submission_verify
from runs.workers.sequential_runs import sequential_continuation, sequential_repeats
from runs.writers.dataset_recording import dataset_record
from runs.writers.optimization_records import optimization_create
from runs.writers.projects import (
    code_root_how,
    code_root_register,
    project_default_ensure,
)
from runs.writers.recording import (
    release_get_or_create,
    run_queued_create,
    run_sequential_moved,
)


def run_submit(
    *,
    config: Mapping[str, Any],
    base_dir: str,
    project: Project | None = None,
    created_by: Account | None = None,
    by: Actor = LOCAL,
    label: str = "config",
    lines: Mapping[str, int] | None = None,
) -> Run:
    """Queue a run described by a run config (the keys of oloproof.yaml) in `project`.

    `base_dir` is the folder relative paths and `file.py:name` references resolve
    from, as the config file's folder does on the command line. The folder and every
    file the config names must lie inside one of the project's registered code roots
    (links resolved); the process itself (`by=LOCAL`: the command line, which already
    holds the database's credentials) registers the folder it submits from. Before
    anything is written the config is loaded as a worker will load it
    (`run_submission_verify`: every problem raised at once, nothing recorded); its
    dataset's cases are recorded with the run, so the workers read them from the
    database. `label` and `lines` name the config file and its keys' lines in
    errors; the release and the policy are recorded at once, so the run shows them
    before a worker takes it, which it does once the transaction commits.
    """
    try:
        checked = engine.check_run_config(config, label=label, lines=lines)
    except engine.ConfigError as exc:
        raise RunConfigInvalidError([(None, str(exc))]) from None
    with transaction.atomic():
        project, roots = _submission_roots(project=project, base_dir=base_dir, by=by)
        loaded = run_submission_verify(
            config=checked,
            base_dir=base_dir,
            project=project,
            roots=roots,
            label=label,
            lines=lines,
        )
        run = run_queued_create(
            project=project,
            config={**checked, "base_dir": base_dir},
            confidence=loaded.config.confidence,
            created_by=created_by,
            dataset=dataset_record(loaded.dataset),
            release=_release_of(project, loaded.config.system),
            policy=None if loaded.policy is None else dict(loaded.policy.describe()),
        )
        send_work_on_commit(Enqueue(start=[run.pk]))
    return run


def _release_of(project: Project, system: Any) -> Release | None:
    if not isinstance(system, engine.System):
        return None
    return release_get_or_create(project=project, system_name=system.name, version=system.version)


def _submission_roots(
    *, project: Project | None, base_dir: str, by: Actor
) -> tuple[Project, list[str]]:
    """The project a submission lands in and the code roots its folder must lie inside.

    The command line (`by=LOCAL`, which holds the database's credentials anyway)
    registers the folder it submits from when the project has no root yet.
    """
    if not os.path.isabs(base_dir):
        raise InvalidRequestError(
            f"base_dir must be an absolute folder on the workers' machines, got {base_dir!r}"
        )
    project = project or project_default_ensure()
    if by is LOCAL and not project_code_roots(project_id=project.pk):
        code_root_register(by=LOCAL, project=project, path=base_dir)
    return project, project_code_roots(project_id=project.pk)


def run_continue(*, user: Actor, run_id: int) -> Run:
    """Run more cases of a sequential run whose gate is inconclusive, into the same run.

    Needs the runner role. The workers add batch after batch in the content-fixed
    order, deciding the gate over all cases so far after each, until it decides or the
    cases run out (`runs.workers.sequential_runs`). A gate with a standing decision is refused:
    that decision was made on the evidence so far, and is revoked first if it is to go.
    """
    run = run_for(user=user, run_id=run_id, role=Role.RUNNER, action="running more cases")
    state, total = sequential_continuation(run=run)
    with transaction.atomic():
        # The gate's lock orders this against a decision being recorded meanwhile.
        gate = Gate.objects.select_for_update().get(run=run)
        standing = Approval.objects.filter(gate=gate, revocation__isnull=True).first()
        if standing is not None:
            raise ConflictError(
                f"the gate of run {run.pk} has a standing decision ({standing.decision} by "
                f"{standing.user}), made on {run.cases_done} cases; revoke it with a reason "
                "before running more cases"
            )
        done = int(state["n_run"]) * sequential_repeats(state)  # rows: each case's repeats
        if not run_sequential_moved(
            run_id=run.pk,
            cases_total=total,
            sequential={**state, "until_decided": True},
            reopen=True,
        ):
            raise ConflictError(f"run {run.pk} is already running more cases")
        chunk_ids = chunks_create(run_id=run.pk, total=total, size=chunk_size(), start=done)
        send_work_on_commit(Enqueue(chunks=chunk_ids))
    return run_for(user=user, run_id=run.pk)


def run_submit_by(
    *, user: Actor, config: Mapping[str, Any], base_dir: str, project: str | None = None
) -> Run:
    """`run_submit` on behalf of a signed-in account, which needs the runner role there."""
    if not user.is_authenticated:
        raise NotPermittedError("submitting a run needs a signed-in account")
    target = submit_project_pick(user=user, slug=project)
    return run_submit(
        config=config, base_dir=base_dir, project=target, created_by=account_of(user), by=user
    )


def optimization_submit(
    *,
    config: Mapping[str, Any],
    base_dir: str,
    project: Project | None = None,
    created_by: Account | None = None,
    by: Actor = LOCAL,
) -> Optimization:
    """Queue an optimization described by an optimization config (optimize.yaml's keys).

    Checked here without importing anything it names; the worker that takes it loads
    the system, the dataset and the metric from `base_dir`, which must lie inside one
    of the project's code roots, as for `run_submit`.
    """
    try:
        checked = optimize.check_optimize_config(config, label="config")
    except engine.ConfigError as exc:
        raise InvalidRequestError(str(exc)) from None
    with transaction.atomic():
        project, roots = _submission_roots(project=project, base_dir=base_dir, by=by)
        if not engine.path_within(base_dir, roots):
            raise NotPermittedError(
                f"base_dir {base_dir!r} is outside the code roots registered for project "
                f"{project.slug!r}. {code_root_how(project=project, folder=base_dir)}"
            )
        record = optimization_create(
            project=project, config={**checked, "base_dir": base_dir}, created_by=created_by
        )
        send_work_on_commit(Enqueue(optimizations=[record.pk]))
    return record


def optimization_submit_by(
    *, user: Actor, config: Mapping[str, Any], base_dir: str, project: str | None = None
) -> Optimization:
    """`optimization_submit` on behalf of a signed-in account: a runner in the project."""
    if not user.is_authenticated:
        raise NotPermittedError("submitting an optimization needs a signed-in account")
    target = submit_project_pick(user=user, slug=project)
    return optimization_submit(
        config=config, base_dir=base_dir, project=target, created_by=account_of(user), by=user
    )


def approval_create(
    *,
    run: Run,
    user: Actor,
    decision: str,
    comment: str = "",
    override: bool = False,
) -> Approval:
    """Approve or reject a run's gate: its one final decision, immutable once written.

    Needs the approver role in the run's project; a run's own submitter may not
    decide it unless the project allows it (four-eyes). A gate that has a standing
    decision takes no other until that one is revoked (`approval_revoke`). Approving
    a gate that did not pass (fail or inconclusive) is an override: it needs
    `override=True` and a reason.
    """
    if not user.is_authenticated:
        raise NotPermittedError("deciding a gate needs a signed-in account with the approver role")
    role_require(user=user, project=run.project, role=Role.APPROVER, action="deciding a gate")
    account = account_of(user)
    if account is None:
        raise NotPermittedError("a gate is decided by a person, not by the process")
    _decision_check(run=run, user=account, decision=decision, override=override, comment=comment)
    with transaction.atomic():
        gate = Gate.objects.select_for_update().filter(run=run).first()
        if gate is None:
            raise InvalidRequestError(
                f"run {run.pk} has no gate to approve: evaluate it with a policy first"
            )
        _decision_outcome_check(run=run, gate=gate, decision=decision, override=override)
        decisions = list(Approval.objects.filter(gate=gate).select_related("revocation"))
        standing = [item for item in decisions if not hasattr(item, "revocation")]
        if standing:
            raise ConflictError(
                f"the gate of run {run.pk} already has its decision ({standing[0].decision} "
                f"by {standing[0].user}); revoke it with a reason to decide again"
            )
        try:
            with transaction.atomic():
                return Approval.objects.create(
                    gate=gate,
                    sequence=len(decisions),
                    user=account,
                    decision=decision,
                    override=override,
                    comment=comment.strip(),
                    gate_outcome=gate.outcome,
                )
        except IntegrityError:
            raise ConflictError(f"the gate of run {run.pk} was decided meanwhile") from None


def _decision_check(
    *, run: Run, user: Account, decision: str, override: bool, comment: str
) -> None:
    if decision not in Approval.Decision.values:
        raise InvalidRequestError(
            f"decision must be one of {', '.join(Approval.Decision.values)}, got {decision!r}"
        )
    _four_eyes_check(run=run, user=user, action="decide it")
    if override and not comment.strip():
        raise OverrideReasonMissingError("an override needs a reason: say why in comment")


def _four_eyes_check(*, run: Run, user: Account, action: str) -> None:
    if submitted_by_self(user=user, run=run):
        raise NotPermittedError(
            f"run {run.pk} was submitted by you; another approver must {action} "
            f"(project {run.project.slug!r} requires four eyes)"
        )


def _decision_outcome_check(*, run: Run, gate: Gate, decision: str, override: bool) -> None:
    if Run.objects.filter(pk=run.pk, status__in=LIVE_STATUSES).exists():
        raise ConflictError(
            f"run {run.pk} is running more cases, so its gate will change; decide it "
            "when the run finishes"
        )
    approving_unpassed = decision == Approval.Decision.APPROVE and gate.outcome != Gate.Outcome.PASS
    if approving_unpassed and not override:
        raise OverrideNeededError(
            f"the gate of run {run.pk} is {gate.outcome}; approving it is an override: "
            "send override=true with the reason in comment",
            gate_outcome=gate.outcome,
        )


def approval_revoke(*, run: Run, user: Actor, reason: str) -> ApprovalRevocation:
    """Withdraw the standing decision on a run's gate, naming why (an audit record).

    Needs the approver role in the run's project, and four eyes: the run's submitter
    may not revoke a decision on it (which would leave their own gate undecided) unless
    the project allows deciding one's own runs. The gate is then undecided: its run
    stops being a baseline if it was approved, and may be decided again.
    """
    role_require(user=user, project=run.project, role=Role.APPROVER, action="revoking a decision")
    account = account_of(user)
    if account is None:
        raise NotPermittedError("a decision is revoked by a person, not by the process")
    _four_eyes_check(run=run, user=account, action="revoke a decision on it")
    if not reason.strip():
        raise InvalidRequestError("a revocation needs a reason: say why in reason")
    with transaction.atomic():
        gate = Gate.objects.select_for_update().filter(run=run).first()
        standing = (
            None
            if gate is None
            else Approval.objects.filter(gate=gate, revocation__isnull=True).first()
        )
        if standing is None:
            raise InvalidRequestError(f"the gate of run {run.pk} has no decision to revoke")
        return ApprovalRevocation.objects.create(
            approval=standing, user=account, reason=reason.strip()
        )
