"""Actions on the runs app, one function per action, keyword-only (`<entity>_<action>`).

Queueing a run, deciding a gate, API tokens and accounts. The rows of a run itself
are written by `runs.recording`, which these actions call.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import AnonymousUser, Permission
from django.contrib.auth.models import User as Account
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

import oloproof_core as engine
import oloproof_core.optimize as optimize
from runs.dispatch import Enqueue, send_work_on_commit
from runs.errors import InvalidRequestError, NotPermittedError
from runs.models import ApiToken, Approval, Gate, Optimization, Run
from runs.optimization_records import optimization_create
from runs.recording import dataset_record, run_queued_create

# Whoever made a request: a signed-in account, or nobody.
User = Account | AnonymousUser
APPROVE_PERMISSION = "runs.approve_gate"
SUBMIT_PERMISSION = "runs.add_run"
TOKEN_PREFIX = "olo_"
_TOKEN_TOUCH_EVERY = timedelta(minutes=1)
"""`last_used_at` is refreshed at most this often, so reads do not each cost a write."""


def run_submit(
    *,
    config: Mapping[str, Any],
    base_dir: str,
    created_by: Account | None = None,
    dataset: engine.Dataset | None = None,
) -> Run:
    """Queue a run described by a run config (the keys of oloproof.yaml).

    `base_dir` is the folder relative paths and `file.py:name` references resolve
    from, as the config file's folder does on the command line. With `dataset`
    (loaded by the caller) its cases are recorded with the run, so the workers read
    them from the database. The run is handed to the workers once the transaction
    commits, so a worker never looks for a run that is not there yet.
    """
    try:
        checked = engine.check_run_config(config, label="config")
    except engine.ConfigError as exc:
        raise InvalidRequestError(str(exc)) from None
    if not os.path.isabs(base_dir):
        raise InvalidRequestError(
            f"base_dir must be an absolute folder on the workers' machines, got {base_dir!r}"
        )
    with transaction.atomic():
        run = run_queued_create(
            config={**checked, "base_dir": base_dir},
            confidence=float(checked.get("confidence", 0.95)),
            created_by=created_by,
            dataset=None if dataset is None else dataset_record(dataset),
        )
        send_work_on_commit(Enqueue(start=[run.pk]))
    return run


def run_submit_by(*, user: User, config: Mapping[str, Any], base_dir: str) -> Run:
    """`run_submit` on behalf of a signed-in account, which needs `runs.add_run`."""
    if not user.is_authenticated or not user.has_perm(SUBMIT_PERMISSION):
        raise NotPermittedError(f"submitting a run needs the {SUBMIT_PERMISSION} permission")
    account = user if isinstance(user, Account) else None
    return run_submit(config=config, base_dir=base_dir, created_by=account)


def optimization_submit(
    *, config: Mapping[str, Any], base_dir: str, created_by: Account | None = None
) -> Optimization:
    """Queue an optimization described by an optimization config (optimize.yaml's keys).

    Checked here without importing anything it names; the worker that takes it loads
    the system, the dataset and the metric from `base_dir`, as `run_submit` does.
    """
    try:
        checked = optimize.check_optimize_config(config, label="config")
    except engine.ConfigError as exc:
        raise InvalidRequestError(str(exc)) from None
    if not os.path.isabs(base_dir):
        raise InvalidRequestError(
            f"base_dir must be an absolute folder on the workers' machines, got {base_dir!r}"
        )
    with transaction.atomic():
        record = optimization_create(
            config={**checked, "base_dir": base_dir}, created_by=created_by
        )
        send_work_on_commit(Enqueue(optimizations=[record.pk]))
    return record


def optimization_submit_by(*, user: User, config: Mapping[str, Any], base_dir: str) -> Optimization:
    """`optimization_submit` on behalf of a signed-in account, which needs `runs.add_run`."""
    if not user.is_authenticated or not user.has_perm(SUBMIT_PERMISSION):
        raise NotPermittedError(
            f"submitting an optimization needs the {SUBMIT_PERMISSION} permission"
        )
    account = user if isinstance(user, Account) else None
    return optimization_submit(config=config, base_dir=base_dir, created_by=account)


def approval_create(
    *,
    run: Run,
    user: User,
    decision: str,
    comment: str = "",
    override: bool = False,
) -> Approval:
    """Approve or reject a run's gate; the record is immutable once written.

    Needs the `runs.approve_gate` permission. Approving a gate that did not pass
    (fail or inconclusive) is an override: it needs `override=True` and a reason.
    """
    if not user.is_authenticated or not user.has_perm(APPROVE_PERMISSION):
        raise NotPermittedError(
            "approving or rejecting a gate needs the runs.approve_gate permission"
        )
    if decision not in Approval.Decision.values:
        raise InvalidRequestError(
            f"decision must be one of {', '.join(Approval.Decision.values)}, got {decision!r}"
        )
    gate = Gate.objects.filter(run=run).first()
    if gate is None:
        raise InvalidRequestError(
            f"run {run.pk} has no gate to approve: evaluate it with a policy first"
        )
    comment = comment.strip()
    approving_unpassed = decision == Approval.Decision.APPROVE and gate.outcome != Gate.Outcome.PASS
    if approving_unpassed and not override:
        raise InvalidRequestError(
            f"the gate of run {run.pk} is {gate.outcome}; approving it is an override: "
            "send override=true with the reason in comment"
        )
    if override and not comment:
        raise InvalidRequestError("an override needs a reason: say why in comment")
    return Approval.objects.create(
        gate=gate,
        user=user,
        decision=decision,
        override=override,
        comment=comment,
        gate_outcome=gate.outcome,
    )


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def api_token_create(*, user: Account, name: str = "") -> tuple[ApiToken, str]:
    """A new API token for `user`; returns the record and the token, shown only this once."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    record = ApiToken.objects.create(
        user=user, name=name, prefix=token[:12], digest=token_digest(token)
    )
    return record, token


def api_token_authenticate(*, token: str) -> Account | None:
    """The active account a token belongs to, or None; notes when the token was last used."""
    record = (
        ApiToken.objects.select_related("user")
        .filter(digest=token_digest(token.strip()), revoked_at__isnull=True)
        .first()
    )
    if record is None or not record.user.is_active:
        return None
    now = timezone.now()
    if record.last_used_at is None or now - record.last_used_at > _TOKEN_TOUCH_EVERY:
        ApiToken.objects.filter(pk=record.pk).filter(
            Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - _TOKEN_TOUCH_EVERY)
        ).update(last_used_at=now)
    return record.user


def api_token_revoke(*, token: ApiToken) -> ApiToken:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def account_ensure(*, username: str, password: str, permissions: Iterable[str] = ()) -> Account:
    """The account with exactly these `runs` permissions and this password (made if new)."""
    user, _ = Account.objects.get_or_create(username=username)
    user.set_password(password)
    user.is_active = True
    user.save()
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label="runs", codename__in=list(permissions))
    )
    return user
