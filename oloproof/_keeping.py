"""A recorded run's keeping from the library: name, tag, hide or delete it, and list runs.

`oloproof runs` does the same through these functions, as the run page and the REST
API do through the same writers (`runs.writers.run_keeping`). They act on the project's store
as the process itself; `by="username"` acts as that account, whose role in the run's
project (runner or higher) is then checked. A run with an approval decision is never
deleted (hide it instead).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from oloproof._cases import _on_platform, _run_number


def _actor(by: str | None) -> Any:
    from runs.access import LOCAL
    from runs.selectors.projects import account_named

    return LOCAL if by is None else account_named(username=by)


def keep_run(
    run: int | str,
    *,
    name: str | None = None,
    tags: Iterable[str] | None = None,
    hidden: bool | None = None,
    by: str | None = None,
) -> dict[str, Any]:
    """Name, tag (exactly these tags) or hide (`hidden=False` shows it again) a run; what
    is not given stays. Returns the run's keeping: `{"run_id", "name", "tags", "hidden"}`."""
    run_id = _run_number(run)
    tag_list = None if tags is None else list(tags)

    def work() -> dict[str, Any]:
        from runs.selectors.keeping import run_keeping
        from runs.selectors.runs import run_get
        from runs.writers.run_keeping import run_hide, run_rename, run_tags_set

        actor = _actor(by)
        if name is not None:
            run_rename(by=actor, run_id=run_id, name=name)
        if tag_list is not None:
            run_tags_set(by=actor, run_id=run_id, tags=tag_list)
        if hidden is not None:
            run_hide(by=actor, run_id=run_id, hidden=hidden)
        kept = run_keeping(user=actor, run=run_get(user=actor, run_id=run_id))
        hidden_now = kept.hidden_at is not None
        return {"run_id": run_id, "name": kept.name, "tags": kept.tags, "hidden": hidden_now}

    return _on_platform(work)


def delete_run(run: int | str, *, by: str | None = None) -> str:
    """Delete a finished run and all its rows; returns what was deleted, in words."""
    run_id = _run_number(run)

    def work() -> str:
        from runs.writers.run_keeping import run_remove

        return run_remove(by=_actor(by), run_id=run_id)

    return _on_platform(work)


def list_runs(
    *, tag: str | None = None, hidden: bool = False, limit: int = 50, by: str | None = None
) -> list[dict[str, Any]]:
    """The newest runs (hidden ones only with `hidden=True`), each as a small dict."""

    def work() -> list[dict[str, Any]]:
        from runs.selectors.runs import RunFilters, runs_in_order, runs_list

        actor = _actor(by)
        listed = runs_list(user=actor, filters=RunFilters(tag=tag, hidden=hidden))
        ids = list(listed.order_by("-created_at", "-id").values_list("pk", flat=True)[:limit])
        return [_run_dict(item) for item in runs_in_order(user=actor, run_ids=ids)]

    return _on_platform(work)


def _run_dict(run: Any) -> dict[str, Any]:
    keeping = getattr(run, "keeping", None)
    release = run.release
    return {
        "run_id": run.pk,
        "release": f"{release.system.name}@{release.version}" if release else None,
        "status": run.status,
        "created_at": run.created_at.isoformat(timespec="seconds"),
        "name": keeping.name if keeping else "",
        "tags": sorted(tag.tag for tag in run.tags.all()),
        "hidden": keeping is not None and keeping.hidden_at is not None,
    }
