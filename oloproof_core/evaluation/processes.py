"""Where a run's code runs: its system's processes, and its evaluators'.

`open_pool` keeps a plan's system processes (and its evaluators' processes) across
several `process_rows` calls; without it each call starts and stops its own. `execute`
runs the system over a batch of cases, in those processes or, for trusted code
(`isolation="thread"`), in this process. `keep_judging` holds the processes the plan's
evaluators judge in (`oloproof_core.judging.contained`), started only for verdicts
the cache does not hold.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from oloproof_core.cases.case import CaseError, CaseResult
from oloproof_core.cases.system_errors import explain_row_reads
from oloproof_core.datasets.conversations import is_conversation
from oloproof_core.datasets.workspace_files import has_workspace
from oloproof_core.execution.conversations import run_conversations
from oloproof_core.execution.isolation import MeteredPool, pool_shape
from oloproof_core.execution.running import ProgressCallback, run_system
from oloproof_core.judging.judge import judge_concurrency
from oloproof_core.results.store import Store

if TYPE_CHECKING:
    from oloproof_core.evaluation.plan import RunPlan


@contextmanager
def open_pool(plan: RunPlan, *, cases: int | None = None) -> Iterator[RunPlan]:
    """Keep the plan's system processes running across several `process_rows` calls, and
    its evaluators' processes with them (`keep_judging`).

    Without it each `process_rows` call starts and stops its own processes. `cases`,
    when known, caps the processes: a 3-case run needs no fourth interpreter.
    """
    if not in_processes(plan) or plan.pool is not None:
        with keep_judging(plan):
            yield plan
        return
    processes, per_process = pool_shape(
        is_async=plan.release.is_async, concurrency=plan.requested_concurrency
    )
    if cases is not None:
        processes = max(1, min(processes, cases))
    plan.pool = MeteredPool(
        plan.release,
        processes=processes,
        per_process=per_process,
        timeout=plan.timeout,
        memory_limit_mb=plan.memory_limit_mb,
        # Without a concurrency asked for, the processes are started as the work needs
        # them; an asked-for number is started at once.
        grow=plan.requested_concurrency is None,
        sandbox=plan.sandbox,
        hidden=plan.hidden_paths,
        # The process that declared a run config's system, already importing it.
        first=getattr(plan.release, "first_process", None),
    )
    try:
        plan.pool.launch()
        with keep_judging(plan):
            yield plan
    finally:
        pool, plan.pool = plan.pool, None
        try:
            pool.close()
        finally:
            # After closing: a call still open then is cut and metered, and told here too.
            plan.execution = pool.describe()


@contextmanager
def keep_judging(plan: RunPlan) -> Iterator[RunPlan]:
    """Keep the processes the plan's evaluators judge in across several `process_rows`
    calls (without it, each call starts and stops its own). Each evaluator's start on its
    first verdict the cache does not hold; none when the plan runs in this process
    (`isolation="thread"`: trusted code)."""
    if plan.judging is not None or not in_processes(plan):
        yield plan
        return
    # Here: a run whose evaluators all judge in this process never loads their pools.
    from oloproof_core.judging.contained import ContainedJudging

    limit = plan.verdict_limit
    plan.judging = judging = ContainedJudging(
        time_limit=limit.seconds,
        limit_origin=limit.origin,
        memory_limit_mb=plan.memory_limit_mb,
        sandbox=plan.sandbox,
        hidden=plan.hidden_paths,
        concurrency=judge_concurrency(plan.concurrency),
    )
    try:
        yield plan
    finally:
        plan.judging = None
        try:
            if judging.started:
                plan.judging_execution = judging.describe()
        finally:
            judging.close()


def prepare_while_processes_start(store: Store) -> None:
    """Work the run needs later, done while its system's processes start in theirs: the
    store's own preparation (a database's set-up), and the statistics' import.

    Before the first case, not during the cases: this process times every case, and
    work of its own beside them would delay the moment it notes a reply.
    """
    prepare = getattr(store, "prepare", None)
    if callable(prepare):
        prepare()
    from oloproof_core.evaluation import aggregate  # noqa: F401  (the statistics, to conclude)


def in_processes(plan: RunPlan) -> bool:
    return plan.isolation == "process"


def execute(plan: RunPlan, cases: list[CaseResult], progress: ProgressCallback | None) -> None:
    """Run the plan's system over `cases`: fill each one's output (or error) and figures.

    A conversation case (`oloproof_core.datasets.conversations`) calls the system once
    per turn, each turn run as a case of its own by the same path (`run_conversations`).
    A case missing before it runs (a row whose workspace files were refused) is not sent."""
    everyone, cases = cases, [case for case in cases if case.error is None]
    single = [case for case in cases if not is_conversation(case.input)]
    if len(single) == len(cases):
        _execute_cases(plan, cases, progress)
    else:
        talks = [case for case in cases if is_conversation(case.input)]
        with open_pool(plan, cases=len(cases)):
            if single:
                _execute_cases(plan, single, progress)
            run_conversations(
                talks,
                lambda turns: _execute_cases(plan, turns, None),
                concurrency=plan.concurrency,
                progress=progress,
            )
    if progress is not None and len(everyone) != len(cases):
        progress("system", len(everyone), len(everyone))


def _execute_cases(
    plan: RunPlan, cases: list[CaseResult], progress: ProgressCallback | None
) -> None:
    if not in_processes(plan):
        refuse_workspaces_in_thread(cases)
        cases = [case for case in cases if case.error is None]
        warmup = plan.release.warmup
        if warmup is not None and not plan.execution:
            warmup()
        plan.execution = {"isolation": "thread", "measurements": "not protected"}
        run_system(
            plan.release,
            cases,
            concurrency=plan.concurrency,
            timeout=plan.timeout,
            progress=progress,
        )
        for case in cases:
            case.measurements.protected = False
        explain_row_reads(cases)
        return
    with open_pool(plan, cases=len(cases)):
        assert plan.pool is not None
        plan.pool.run(cases, progress)
        plan.execution = plan.pool.describe()
    explain_row_reads(cases)
    if progress is not None:
        progress("system", len(cases), len(cases))


def refuse_workspaces_in_thread(cases: list[CaseResult]) -> None:
    """A task with a workspace runs in processes of its own: oloproof's own process has
    one working directory for every thread, and no sandbox to hold the agent's commands."""
    for case in cases:
        if has_workspace(case.input):
            case.error = CaseError(
                "WorkspaceError",
                "this case has workspace files (input.files), and a workspace is made only "
                "in the system's own processes: remove `isolation: thread` (the default, "
                "isolation: process, makes one)",
            )
