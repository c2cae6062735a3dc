"""The one writer of what people keep on a run (its name, tags, hiding), and deleting a run.

Every face (the run page, the REST API, the command line and the library) acts through
these functions, which check the project role with the access helper: naming, tagging
and hiding a run, and deleting it, are for runners (and the roles above). A run with an
approval decision is never deleted: the decision is an audit record about it; hiding
it is the way to keep it out of the history. A deletion is on the audit list.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction
from django.utils import timezone

from runs.access import Actor, Role, account_of, run_for
from runs.errors import ConflictError, InvalidRequestError
from runs.models import Approval, Change, Run, RunKeeping, RunTag
from runs.models.keeping import MAX_RUN_NAME, MAX_TAG, MAX_TAGS
from runs.selectors.runs import LIVE_STATUSES
from runs.writers.audit import change_record
from runs.writers.recording import run_delete


def _run(by: Actor, run_id: int, action: str) -> Run:
    return run_for(user=by, run_id=run_id, role=Role.RUNNER, action=action)


def run_rename(*, by: Actor, run_id: int, name: str) -> RunKeeping:
    """Give the run a name shown beside its number ("" takes the name away)."""
    run = _run(by, run_id, "naming a run")
    name = " ".join(name.split())
    if len(name) > MAX_RUN_NAME:
        raise InvalidRequestError(f"a run's name holds at most {MAX_RUN_NAME} characters")
    keeping, _ = RunKeeping.objects.update_or_create(run=run, defaults={"name": name})
    return keeping


def run_hide(*, by: Actor, run_id: int, hidden: bool = True) -> RunKeeping:
    """Hide the run from the history (shown again on request), or show it again."""
    run = _run(by, run_id, "hiding a run")
    changes = {"hidden_at": timezone.now(), "hidden_by": account_of(by)} if hidden else {}
    keeping, _ = RunKeeping.objects.update_or_create(
        run=run, defaults=changes or {"hidden_at": None, "hidden_by": None}
    )
    return keeping


def tags_clean(tags: Iterable[str]) -> list[str]:
    """Tags as kept: stripped, lower-case, no repeats, in the order given."""
    kept: list[str] = []
    for tag in tags:
        cleaned = tag.strip().lower()
        if not cleaned or cleaned in kept:
            continue
        if len(cleaned) > MAX_TAG or any(char.isspace() or char == "," for char in cleaned):
            raise InvalidRequestError(
                f"a tag is one word of at most {MAX_TAG} characters without commas, got {tag!r}"
            )
        kept.append(cleaned)
    if len(kept) > MAX_TAGS:
        raise InvalidRequestError(f"a run holds at most {MAX_TAGS} tags")
    return kept


def run_tags_set(*, by: Actor, run_id: int, tags: Iterable[str]) -> list[str]:
    """Give the run exactly these tags; returns them as kept."""
    run = _run(by, run_id, "tagging a run")
    kept = tags_clean(tags)
    with transaction.atomic():
        RunTag.objects.filter(run=run).exclude(tag__in=kept).delete()
        present = set(RunTag.objects.filter(run=run).values_list("tag", flat=True))
        RunTag.objects.bulk_create(
            [RunTag(run=run, tag=tag) for tag in kept if tag not in present],
            ignore_conflicts=True,
        )
    return sorted(kept)


def run_remove(*, by: Actor, run_id: int) -> str:
    """Delete the run and all its rows; returns the words the audit list keeps for it.

    Refused for a live run (its workers still write to it) and for a run with an
    approval decision, revoked or not.
    """
    run = _run(by, run_id, "deleting a run")
    if run.status in LIVE_STATUSES:
        raise ConflictError(f"run #{run.pk} is {run.status}: wait until it has finished")
    if Approval.objects.filter(gate__run=run).exists():
        raise ConflictError(
            f"run #{run.pk} has an approval decision, an audit record that stays with it, "
            "so it cannot be deleted; hide it instead"
        )
    release = run.release
    what = f"run #{run.pk}" + (f" of {release.system.name}@{release.version}" if release else "")
    with transaction.atomic():
        run_delete(run=run)
        change_record(by=by, action=Change.Action.RUN_DELETE, subject=what, project=run.project)
    return what
