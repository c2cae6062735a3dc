"""Writes to the runs app, one function per action, keyword-only (`<entity>_<action>`).

Recording a run is bulk work in fixed-size batches: a 100,000-case run costs a
handful of queries per batch, never one per case.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.contrib.auth.models import User as Account
from django.db import transaction
from django.utils import timezone

from metrics._batches import batches
from metrics.services import case_verdicts_create, evaluators_ensure, metric_estimates_create
from oloproof_core._canonical import canonical_json, digest_text
from oloproof_core.case import CaseResult as EngineCaseResult
from oloproof_core.result import Result
from oloproof_core.run_config import KEYS as RUN_CONFIG_KEYS
from oloproof_core.run_config import REQUIRED as RUN_CONFIG_REQUIRED
from runs.errors import InvalidRequestError, NotPermittedError
from runs.models import (
    ApiToken,
    Approval,
    CaseResult,
    Dataset,
    DatasetCase,
    Gate,
    Release,
    Run,
    System,
)

# Whoever made a request: a signed-in account, or nobody.
User = Account | AnonymousUser
APPROVE_PERMISSION = "runs.approve_gate"
TOKEN_PREFIX = "olo_"


def _batch_size(batch_size: int | None) -> int:
    return batch_size or int(getattr(settings, "OLOPROOF_RECORD_CHUNK_SIZE", 2000))


def release_get_or_create(*, system_name: str, version: str | None) -> Release:
    system, _ = System.objects.get_or_create(name=system_name)
    release, _ = Release.objects.get_or_create(system=system, version=version or "")
    return release


def dataset_get_or_create(
    *,
    digest: str,
    source: str,
    splits: Mapping[str, int],
    cases: Sequence[EngineCaseResult],
    batch_size: int | None = None,
) -> Dataset:
    """The dataset with this digest; its cases are written only the first time it is seen."""
    with transaction.atomic():
        dataset, created = Dataset.objects.get_or_create(
            digest=digest,
            defaults={"source": source[:1000], "n_cases": len(cases), "splits": dict(splits)},
        )
        if created:
            for offset, batch in _numbered_batches(cases, _batch_size(batch_size)):
                DatasetCase.objects.bulk_create(
                    [
                        DatasetCase(
                            dataset=dataset,
                            case_id=case.id,
                            position=offset + index,
                            input=case.input,
                            expected=case.expected,
                            split=case.split,
                            cluster=case.cluster,
                        )
                        for index, case in enumerate(batch)
                    ],
                    ignore_conflicts=True,
                )
    return dataset


def _numbered_batches(
    items: Sequence[EngineCaseResult], size: int
) -> Iterable[tuple[int, list[EngineCaseResult]]]:
    offset = 0
    for batch in batches(items, size):
        yield offset, batch
        offset += len(batch)


def case_outcome(case: EngineCaseResult, pass_fail: frozenset[str]) -> str:
    """missing if the system or any evaluator failed; failed if a pass/fail criterion failed."""
    if case.error is not None:
        return CaseResult.Outcome.MISSING
    outcome = CaseResult.Outcome.PASSED
    for criterion, verdict in case.verdicts.items():
        if verdict.value is None:
            return CaseResult.Outcome.MISSING
        if criterion in pass_fail and verdict.value < 1.0:
            outcome = CaseResult.Outcome.FAILED
    return outcome


def case_results_create(
    *,
    run_id: int,
    cases: Sequence[EngineCaseResult],
    pass_fail: frozenset[str],
    first_position: int = 0,
    batch_size: int | None = None,
) -> int:
    """Record what the system did on each case; a case already recorded for the run is kept.

    The (run, case_id) unique constraint plus `ignore_conflicts` is what makes a
    retried or duplicated chunk of work harmless.
    """
    written = 0
    for offset, batch in _numbered_batches(cases, _batch_size(batch_size)):
        rows = [
            CaseResult(
                run_id=run_id,
                case_id=case.id,
                position=first_position + offset + index,
                output=case.output if case.error is None else None,
                error_type=case.error.type if case.error is not None else "",
                error_message=case.error.message if case.error is not None else "",
                error_traceback=case.error.traceback if case.error is not None else "",
                latency_ms=case.latency_ms,
                cost_usd=case.cost_usd,
                artifacts=case.artifacts,
                outcome=case_outcome(case, pass_fail),
            )
            for index, case in enumerate(batch)
        ]
        CaseResult.objects.bulk_create(rows, ignore_conflicts=True)
        written += len(rows)
    return written


def gate_record(*, run: Run, gate: Mapping[str, Any], decided_at: datetime | None = None) -> Gate:
    """Keep the policy's decision on a run (replacing an earlier one for the same run)."""
    outcome = gate.get("outcome")
    if outcome not in Gate.Outcome.values:
        raise InvalidRequestError(
            f"gate outcome must be one of {', '.join(Gate.Outcome.values)}, got {outcome!r}"
        )
    record, _ = Gate.objects.update_or_create(
        run=run,
        defaults={
            "outcome": outcome,
            "summary": str(gate.get("summary") or ""),
            "rules": list(gate.get("rules") or []),
            "decided_at": decided_at or timezone.now(),
        },
    )
    return record


def _policy_fields(policy: Any) -> dict[str, str]:
    if policy is None:
        return {"policy_digest": "", "policy_text": ""}
    if isinstance(policy, Mapping):
        text = policy.get("text")
        text = text if isinstance(text, str) else canonical_json(policy)
        digest = policy.get("digest")
        digest = digest if isinstance(digest, str) else digest_text(text)
    else:
        text = str(policy)
        digest = digest_text(text)
    return {"policy_digest": digest[:64], "policy_text": text}


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def run_record(
    *,
    result: Result,
    created_by: Account | None = None,
    batch_size: int | None = None,
) -> Run:
    """Keep a finished run: release, dataset (once), cases, verdicts, metrics and gate.

    One transaction; each table is written in batches of `batch_size` cases.
    """
    provenance = result.provenance
    system_info = provenance.get("system") or {}
    dataset_info = provenance.get("dataset") or {}
    descriptions = provenance.get("evaluators") or []
    size = _batch_size(batch_size)
    pass_fail = frozenset(
        item["criterion"] for item in descriptions if item.get("value_type") == "pass_fail"
    )
    with transaction.atomic():
        release = release_get_or_create(
            system_name=str(system_info.get("name") or "unnamed"),
            version=system_info.get("version"),
        )
        dataset = dataset_get_or_create(
            digest=str(dataset_info.get("digest") or _cases_digest(result.cases)),
            source=str(dataset_info.get("source") or "<unknown>"),
            splits=_split_counts(result.cases),
            cases=result.cases,
            batch_size=size,
        )
        evaluators = evaluators_ensure(descriptions=descriptions)
        started_at = _parse_time(provenance.get("started_at"))
        finished_at = _parse_time(provenance.get("finished_at"))
        run = Run.objects.create(
            release=release,
            dataset=dataset,
            status=Run.Status.SUCCEEDED,
            split=dataset_info.get("split"),
            cases_total=len(result.cases),
            cases_done=len(result.cases),
            cases_failed=sum(1 for case in result.cases if case.error is not None),
            config={"system": system_info.get("import_path")},
            provenance=provenance,
            confidence=float(provenance.get("confidence") or 0.95),
            created_by=created_by,
            started_at=started_at,
            finished_at=finished_at or timezone.now(),
            duration_s=provenance.get("duration_s"),
            **_policy_fields(provenance.get("policy")),
        )
        case_results_create(run_id=run.pk, cases=result.cases, pass_fail=pass_fail, batch_size=size)
        case_verdicts_create(run_id=run.pk, cases=result.cases, batch_size=size)
        metric_estimates_create(run_id=run.pk, metrics=result.metrics, evaluators=evaluators)
        gate = _gate_dict(result)
        if gate is not None:
            gate_record(run=run, gate=gate, decided_at=finished_at)
    return run


def _gate_dict(result: Result) -> Mapping[str, Any] | None:
    if result.gate is not None:
        gate = result.gate.to_dict()
        return gate if isinstance(gate, Mapping) else None
    stored = result.extras.get("gate")
    return stored if isinstance(stored, Mapping) else None


def _split_counts(cases: Sequence[EngineCaseResult]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for case in cases:
        if case.split is not None:
            counts[case.split] = counts.get(case.split, 0) + 1
    return counts


def _cases_digest(cases: Sequence[EngineCaseResult]) -> str:
    hasher = hashlib.sha256()
    for case in cases:
        hasher.update(canonical_json([case.id, case.input, case.expected]).encode())
    return hasher.hexdigest()


def run_submit(
    *,
    config: Mapping[str, Any],
    base_dir: str,
    created_by: Account | None = None,
) -> Run:
    """Queue a run described by a run config (the keys of oloproof.yaml).

    `base_dir` is the folder relative paths and `file.py:name` references resolve
    from, as the config file's folder does on the command line. The run is handed
    to the workers once the transaction commits, so a worker never looks for a run
    that is not there yet.
    """
    unknown = sorted(set(config) - set(RUN_CONFIG_KEYS))
    if unknown:
        allowed = ", ".join(RUN_CONFIG_KEYS)
        raise InvalidRequestError(f"config: unknown key {unknown[0]!r}; allowed keys: {allowed}")
    for key in RUN_CONFIG_REQUIRED:
        if not config.get(key):
            raise InvalidRequestError(f"config: missing key {key!r} ({RUN_CONFIG_KEYS[key]})")
    if not os.path.isabs(base_dir):
        raise InvalidRequestError(
            f"base_dir must be an absolute folder on the workers' machines, got {base_dir!r}"
        )
    confidence = config.get("confidence", 0.95)
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        raise InvalidRequestError(f"config: 'confidence' must be a number, got {confidence!r}")
    if not 0 < confidence < 1:
        raise InvalidRequestError(f"config: 'confidence' must be between 0 and 1, got {confidence}")
    run = Run.objects.create(
        status=Run.Status.QUEUED,
        split=config.get("split"),
        config={**dict(config), "base_dir": base_dir},
        confidence=float(confidence),
        created_by=created_by,
    )
    transaction.on_commit(lambda: _enqueue(run.pk))
    return run


def _enqueue(run_id: int) -> None:
    from runs.queue import enqueue_run

    enqueue_run(run_id)


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


def api_token_revoke(*, token: ApiToken) -> ApiToken:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token
