"""`DjangoStore`: the engine's `Store` kept in the Django database.

The verdict cache and every recorded run live here, so they outlast the process
and the dashboard shows them. Reads and writes are batched: a 100,000-case run
is recorded with a handful of queries per batch of cases.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from django.contrib.auth.models import User
from django.db import close_old_connections, transaction
from django.utils import timezone

from metrics.selectors import cached_verdicts_get
from metrics.services import cached_verdicts_put
from oloproof_core import OloproofError, fewer_collections
from runs.access import LOCAL
from runs.errors import NotFoundError
from runs.models import Project, Run
from runs.writers.projects import project_default_ensure, project_ensure
from runs.writers.recording import (
    chunk_cases_record,
    pass_fail_criteria,
    run_conclusion_record,
    run_fail,
    run_open_record,
    run_record,
)

if TYPE_CHECKING:
    from oloproof_core import CacheEntry, CaseResult, Earlier, Result, RunOpening, Verdict

T = TypeVar("T")


def outside_event_loop(work: Callable[[], T]) -> T:
    """Run database work synchronously even when called from a running event loop.

    Django refuses ORM calls from async contexts (a notebook cell runs in one), so
    such calls go through a short-lived thread that owns its own connection.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return work()

    def isolated() -> T:
        try:
            return work()
        finally:
            close_old_connections()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(isolated).result()


@dataclass(slots=True)
class _OpenRun:
    """A run this store records as it goes, between its opening and its conclusion."""

    run: Run
    pass_fail: frozenset[str]
    fill_dataset: int | None


class DjangoStore:
    """The engine's Store over the Django ORM (SQLite or PostgreSQL).

    Runs are recorded in `project` (by slug; the `default` project when not given),
    and baselines are looked for there only.
    """

    def __init__(
        self,
        *,
        created_by: User | None = None,
        batch_size: int | None = None,
        project: str | None = None,
    ) -> None:
        self.created_by = created_by
        self.batch_size = batch_size
        self.project_slug = project
        self._open_runs: dict[str, _OpenRun] = {}

    def _project(self) -> Project:
        if self.project_slug is None:
            return project_default_ensure()
        return project_ensure(slug=self.project_slug)

    def get_verdicts(self, keys: Collection[str]) -> Mapping[str, Verdict]:
        return outside_event_loop(lambda: cached_verdicts_get(keys=keys))

    def put_verdicts(self, entries: Sequence[CacheEntry]) -> None:
        outside_event_loop(lambda: cached_verdicts_put(entries=entries))

    def record_run(self, result: Result) -> str | None:
        # Recording allocates a few objects per cell of every row; without the guard
        # the collector rescans the whole Result over and over while it does.
        with fewer_collections():
            run = outside_event_loop(
                lambda: run_record(
                    result=result,
                    created_by=self.created_by,
                    batch_size=self.batch_size,
                    project=self._project(),
                )
            )
        return str(run.pk)

    def run_open(self, opening: RunOpening) -> str:
        """Open a run that records its cases as it goes (the engine's `RecordsAsItGoes`)."""
        run, fill = outside_event_loop(
            lambda: run_open_record(
                opening=opening, created_by=self.created_by, project=self._project()
            )
        )
        run_id = str(run.pk)
        self._open_runs[run_id] = _OpenRun(
            run=run,
            pass_fail=pass_fail_criteria(opening.evaluators),
            fill_dataset=run.dataset_id if fill else None,
        )
        return run_id

    def run_cases_add(self, run_id: str, cases: Sequence[CaseResult], first_position: int) -> None:
        opened = self._open_runs[run_id]

        def record() -> None:
            with transaction.atomic():
                chunk_cases_record(
                    run_id=opened.run.pk,
                    cases=cases,
                    pass_fail=opened.pass_fail,
                    first_position=first_position,
                    new_rows=True,
                    dataset_id=opened.fill_dataset,
                )

        outside_event_loop(record)

    def run_close(self, run_id: str, result: Result) -> str:
        opened = self._open_runs.pop(run_id)
        with fewer_collections():
            closed = outside_event_loop(
                lambda: run_conclusion_record(
                    run=opened.run, result=result, finished_at=timezone.now()
                )
            )
        if not closed:
            raise OloproofError(f"run #{run_id} was ended elsewhere before it could finish")
        return run_id

    def run_abandon(self, run_id: str, reason: str) -> None:
        self._open_runs.pop(run_id, None)
        outside_event_loop(lambda: run_fail(run_id=int(run_id), reason=reason))

    def find_baseline(self, system_name: str, release: str | None = None) -> Result | None:
        """The latest successful run of `release`; without one, the last approved run."""
        # Here and below, what reads runs back loads when first asked for: most runs never
        # do, and the store's set-up is what a small recorded run waits for.
        from runs.selectors.gates import baseline_run_find
        from runs.selectors.results import run_result

        def find() -> Result | None:
            run = baseline_run_find(
                project_id=self._project().pk, system_name=system_name, release=release
            )
            return None if run is None else run_result(run=run)

        return outside_event_loop(find)

    def earlier_tries(self, cases_digest: str, system_name: str, source: str) -> Earlier:
        """The tries of this system's latest finished runs of the same cases, at any
        repeat count, for `repeats: auto` (`oloproof_core.evaluation.auto_repeats`)."""
        from runs.selectors.earlier_tries import earlier_tries

        return outside_event_loop(
            lambda: earlier_tries(
                project_id=self._project().pk,
                cases_digest=cases_digest,
                system_name=system_name,
                source=source,
            )
        )

    def load_run(self, run_id: str) -> Result:
        """A recorded run by its id, as the engine's Result (for baselines, gates, `load`)."""
        from runs.selectors.results import run_result
        from runs.selectors.runs import run_get

        def load() -> Result:
            try:
                run = run_get(user=LOCAL, run_id=int(run_id))
            except (NotFoundError, ValueError):
                raise OloproofError(f"no run #{run_id} in this store") from None
            if run.status != run.Status.SUCCEEDED:
                raise OloproofError(
                    f"run #{run_id} is {run.status}: only a finished run can be read back"
                )
            return run_result(run=run, with_transcripts=True)

        return outside_event_loop(load)

    def __repr__(self) -> str:
        return "<DjangoStore>"
