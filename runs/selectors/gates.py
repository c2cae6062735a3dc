"""Gates, their approvals, and the baseline a new run is compared with."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, QuerySet

from runs.models import Approval, Gate, Run


def run_approvals(*, run: Run) -> QuerySet[Approval]:
    return Approval.objects.filter(gate__run=run).select_related("user").order_by("created_at")


def baseline_run_find(*, system_name: str, release: str | None = None) -> Run | None:
    """The run a new one is compared with.

    With `release`, the latest successful run of that release (system at version);
    without, the run of this system most recently approved at its gate.
    """
    finished = Run.objects.filter(status=Run.Status.SUCCEEDED, release__system__name=system_name)
    if release is not None:
        return finished.filter(release__version=release).order_by("-created_at", "-id").first()
    approved = (
        Approval.objects.filter(
            gate__run__release__system__name=system_name,
            gate__run__status=Run.Status.SUCCEEDED,
            decision=Approval.Decision.APPROVE,
        )
        .select_related("gate__run")
        .order_by("-created_at", "-id")
        .first()
    )
    return None if approved is None else approved.gate.run


def gates_pending() -> QuerySet[Gate]:
    """Gates nobody has approved or rejected yet, newest first.

    Runs recorded by tests (provenance `origin.queue_approval` false) wait for nobody:
    they are listed with the other runs, and can still be decided on their page.
    """
    return (
        Gate.objects.filter(~Exists(Approval.objects.filter(gate=OuterRef("pk"))))
        .exclude(run__provenance__origin__queue_approval=False)
        .select_related("run__release__system", "run__dataset")
        .order_by("-decided_at", "-id")
    )


def approvals_audit() -> QuerySet[Approval]:
    """Every decision ever recorded, newest first, with who and on which run."""
    return Approval.objects.select_related("user", "gate__run__release__system").order_by(
        "-created_at", "-id"
    )
