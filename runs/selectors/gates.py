"""Gates, their decisions, and the baseline a new run is compared with."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, QuerySet

from runs.access import Actor, approvals_visible, gates_visible
from runs.models import Approval, Gate, Run


def run_approvals(*, run: Run) -> QuerySet[Approval]:
    """Every decision on the run's gate, oldest first, each with its revocation if any."""
    return (
        Approval.objects.filter(gate__run=run)
        .select_related("user", "revocation__user")
        .order_by("sequence", "created_at")
    )


def standing_decision(*, run: Run) -> Approval | None:
    """The gate's one decision in force (not revoked), or None while it is undecided."""
    return (
        Approval.objects.filter(gate__run=run, revocation__isnull=True)
        .select_related("user")
        .first()
    )


def baseline_run_find(
    *, project_id: int, system_name: str, release: str | None = None
) -> Run | None:
    """The run a new one of the project is compared with.

    With `release`, the latest successful run of that release (system at version);
    without, the run of this system most recently approved at its gate by a decision
    still standing (a revoked approval no longer makes a baseline).
    """
    finished = Run.objects.filter(
        project_id=project_id,
        status=Run.Status.SUCCEEDED,
        release__system__name=system_name,
    )
    if release is not None:
        return finished.filter(release__version=release).order_by("-created_at", "-id").first()
    approved = (
        Approval.objects.filter(
            gate__run__in=finished,
            decision=Approval.Decision.APPROVE,
            revocation__isnull=True,
        )
        .select_related("gate__run")
        .order_by("-created_at", "-id")
        .first()
    )
    return None if approved is None else approved.gate.run


def gates_pending(*, user: Actor) -> QuerySet[Gate]:
    """Gates of `user`'s projects without a standing decision, newest first.

    Runs recorded by tests (provenance `origin.queue_approval` false) wait for nobody:
    they are listed with the other runs, and can still be decided on their page.
    """
    standing = Approval.objects.filter(gate=OuterRef("pk"), revocation__isnull=True)
    return (
        gates_visible(user=user)
        .filter(~Exists(standing))
        .exclude(run__provenance__origin__queue_approval=False)
        .select_related("run__release__system", "run__dataset", "run__project")
        .order_by("-decided_at", "-id")
    )


def approvals_audit(*, user: Actor) -> QuerySet[Approval]:
    """Every decision recorded in `user`'s projects, newest first, with its revocation."""
    return (
        approvals_visible(user=user)
        .select_related(
            "user", "gate__run__release__system", "gate__run__project", "revocation__user"
        )
        .order_by("-created_at", "-id")
    )
