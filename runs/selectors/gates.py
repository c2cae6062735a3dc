"""Gates, their decisions, and the baseline a new run is compared with."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q, QuerySet

from runs.access import Actor, approvals_visible, gates_decidable, gates_visible
from runs.models import Approval, Gate, Run
from runs.selectors.runs import LIVE_STATUSES


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


FOR_REVIEW = Q(run__provenance__origin__queue_approval__isnull=True) | Q(
    run__provenance__origin__queue_approval=True
)
"""Runs whose gates wait for a person: all but those a test harness recorded with the
explicit flag `provenance.origin.queue_approval: false` (`oloproof._origin`: the pytest
plugin's runs, unless the test asks for approval). Runs of the command line, `evaluate()`,
the workers, optimizations and the demo carry no such flag and all wait."""


def _awaiting(gates: QuerySet[Gate]) -> QuerySet[Gate]:
    standing = Approval.objects.filter(gate=OuterRef("pk"), revocation__isnull=True)
    return (
        gates.filter(~Exists(standing))
        .filter(FOR_REVIEW)
        # Running more cases: its gate will change, and cannot be decided until it has.
        .exclude(run__status__in=LIVE_STATUSES)
    )


def gates_pending(*, user: Actor) -> QuerySet[Gate]:
    """Gates of `user`'s projects waiting for a decision, newest first: every recorded
    run with a gate and no standing decision (see FOR_REVIEW), whoever may decide it."""
    return (
        _awaiting(gates_visible(user=user))
        .select_related("run__release__system", "run__dataset", "run__project", "run__created_by")
        .order_by("-decided_at", "-id")
    )


def gates_to_decide(*, user: Actor) -> QuerySet[Gate]:
    """`user`'s queue: the pending gates they may decide (approver role, and four eyes:
    not their own runs unless the project allows it). The navigation counts it."""
    return _awaiting(gates_decidable(user=user)).order_by("-decided_at", "-id")


def approvals_audit(*, user: Actor) -> QuerySet[Approval]:
    """Every decision recorded in `user`'s projects, newest first, with its revocation."""
    return (
        approvals_visible(user=user)
        .select_related(
            "user", "gate__run__release__system", "gate__run__project", "revocation__user"
        )
        .order_by("-created_at", "-id")
    )
