"""What people keep on a run (its name, tags, whether hidden), as the run page shows it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from runs.access import Actor, Role, role_allows
from runs.models import Approval, Run, RunKeeping, RunTag


@dataclass(frozen=True, slots=True)
class Keeping:
    name: str
    tags: list[str]
    hidden_at: datetime | None
    may_keep: bool
    """Whether the reader may name, tag, hide and delete it (the runner role)."""
    deletable: bool
    """False when an approval decision stays with the run (or it is still running)."""


def run_keeping(*, user: Actor, run: Run) -> Keeping:
    """The run's name, tags and hiding, and what the reader may do with them (`run` is one
    they may see)."""
    kept = RunKeeping.objects.filter(run=run).first()
    return Keeping(
        name=kept.name if kept else "",
        tags=list(RunTag.objects.filter(run=run).order_by("tag").values_list("tag", flat=True)),
        hidden_at=kept.hidden_at if kept else None,
        may_keep=role_allows(user=user, project=run.project, role=Role.RUNNER),
        deletable=run.is_finished and not Approval.objects.filter(gate__run=run).exists(),
    )
