"""`submit(config, wait=...)`: queue a run for the workers, as `oloproof run --submit` does;
`continue_run(run_id, wait=...)`: run more cases of an inconclusive sequential gate there,
as `oloproof continue RUN` does.

The config (a run-config file, or a mapping of the same keys with `base_dir`) is
checked first by the same function the dashboard's New-run form calls
(`runs.workers.run_code.run_config_verify`): its system and evaluators import, its dataset
and rows load, its policy loads and could pass, so every mistake shows at once
rather than in a worker's log. The dataset is recorded with the run, so the workers
read its cases from the database; they load the system and evaluators from the
config's folder, as recorded.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, overload

from oloproof._platform import outside_event_loop
from oloproof._store import run_url
from oloproof_core import ConfigError, OloproofError, Result, run_config_read

_POLL_INTERVAL_S = 0.25
NO_WORKER_HINT_AFTER_S = 10.0

Log = Callable[[str], None]
Progress = Callable[[str, int, int], None]
"""Called as progress(label, cases done, cases in the run) while a run advances."""


@dataclass(frozen=True, slots=True)
class Submission:
    """A queued run: its id, its dashboard page, and a way to follow it to its Result."""

    run_id: int
    n_cases: int

    @property
    def url(self) -> str | None:
        return run_url(self.run_id)

    def progress(self) -> dict[str, Any]:
        """Status and counts: `status`, `cases_done`, `cases_total`, `finished`, `error`."""
        from runs.access import LOCAL
        from runs.selectors.runs import run_progress

        return outside_event_loop(lambda: run_progress(user=LOCAL, run_id=self.run_id))

    def wait(
        self,
        *,
        timeout: float | None = None,
        log: Log | None = None,
        progress: Progress | None = None,
    ) -> Result:
        """Follow the run until it finishes and return its Result (with its gate).

        `log` gets a line at each change of status, and at each change of the count of
        cases done unless `progress` is given: that is then called with every count.
        """
        return _wait(self, timeout=timeout, log=log, progress=progress)


def _read(
    config: str | os.PathLike[str] | Mapping[str, Any], base_dir: str | None
) -> tuple[Any, str, str, dict[str, int]]:
    """The config's keys, the folder they resolve from, its name and its keys' lines."""
    if isinstance(config, Mapping):
        folder = os.path.abspath(base_dir or os.getcwd())
        raw = {key: value for key, value in config.items() if key != "base_dir"}
        return raw, folder, "config", {}
    path = os.fspath(config)
    data, lines = run_config_read(path)
    return data, os.path.dirname(os.path.abspath(path)), path, lines


@overload
def submit(
    config: str | os.PathLike[str] | Mapping[str, Any],
    *,
    wait: Literal[True],
    base_dir: str | None = None,
    concurrency: int | None = None,
    repeats: int | str | None = None,
    judge_repeats: int | None = None,
    timeout: float | None = None,
    log: Log | None = None,
) -> Result: ...
@overload
def submit(
    config: str | os.PathLike[str] | Mapping[str, Any],
    *,
    wait: Literal[False] = False,
    base_dir: str | None = None,
    concurrency: int | None = None,
    repeats: int | str | None = None,
    judge_repeats: int | None = None,
    timeout: float | None = None,
    log: Log | None = None,
) -> Submission: ...
def submit(
    config: str | os.PathLike[str] | Mapping[str, Any],
    *,
    wait: bool = False,
    base_dir: str | None = None,
    concurrency: int | None = None,
    repeats: int | str | None = None,
    judge_repeats: int | None = None,
    timeout: float | None = None,
    log: Log | None = None,
) -> Submission | Result:
    """Queue a run for the workers (`oloproof worker`, or the one `oloproof serve` starts).

    `config` is a run-config file (oloproof.yaml) or a mapping of its keys, whose
    relative paths resolve from `base_dir` (default: the working directory);
    `concurrency`, `repeats` and `judge_repeats` override the config's. Returns a
    `Submission`; with `wait=True`, follows the run and returns its `Result` (`timeout`
    seconds at most).
    """
    raw, folder, label, lines = _read(config, base_dir)
    if concurrency and isinstance(raw, Mapping):
        raw = {**raw, "concurrency": concurrency}
    overrides = {"repeats": repeats, "judge_repeats": judge_repeats}
    if isinstance(raw, Mapping):
        raw = {**raw, **{key: value for key, value in overrides.items() if value is not None}}
    run_id, n_cases = outside_event_loop(lambda: _queue(raw, folder, label, lines))
    submission = Submission(run_id=run_id, n_cases=n_cases)
    if log is not None:
        log(f"run #{run_id} queued ({n_cases:,} cases)")
    return submission.wait(timeout=timeout, log=log) if wait else submission


def _queue(raw: Any, folder: str, label: str, lines: dict[str, int]) -> tuple[int, int]:
    """(run id, number of cases) of the run queued, once checked as a worker will load it."""
    from oloproof.cli._django import django_ready

    django_ready()
    from runs.errors import DomainError
    from runs.services import run_submit

    try:
        run = run_submit(config=raw, base_dir=folder, label=label, lines=lines)
    except DomainError as exc:
        raise ConfigError(str(exc)) from None
    return int(run.pk), int(run.cases_total)


def _wait(
    submission: Submission, *, timeout: float | None, log: Log | None, progress: Progress | None
) -> Result:
    started = time.monotonic()
    hinted = False
    shown: tuple[Any, Any] = (None, None)
    while True:
        state = submission.progress()
        if progress is not None:
            label = f"run #{submission.run_id} {state['status']}"
            progress(label, state["cases_done"], state["cases_total"])
        told = (state["status"], None if progress is not None else state["cases_done"])
        if log is not None and told != shown:
            shown = told
            log(
                f"run #{submission.run_id}: {state['status']} {state['cases_done']:,}/"
                f"{state['cases_total']:,} cases"
            )
        if state["finished"]:
            break
        waited = time.monotonic() - started
        if timeout is not None and waited > timeout:
            raise OloproofError(
                f"run #{submission.run_id} is still {state['status']} after {timeout:g} s"
            )
        idle = state["status"] == "queued" and waited > NO_WORKER_HINT_AFTER_S
        if log is not None and not hinted and idle:
            hinted = True
            log(
                "no worker has taken the run yet: start one with `oloproof worker` "
                "(or `oloproof serve`), using the same data folder or DATABASE_URL and broker"
            )
        time.sleep(_POLL_INTERVAL_S)
    if state["status"] == "failed":
        raise OloproofError(f"run #{submission.run_id} failed: {state['error']}")
    from oloproof._results import load

    return load(submission.run_id, store=_project_store())


def continue_run(
    run_id: int,
    *,
    wait: bool = False,
    timeout: float | None = None,
    log: Log | None = None,
    progress: Progress | None = None,
) -> Submission | Result:
    """Run more cases of a recorded run whose sequential gate is inconclusive, on the workers.

    The cases go into the same run, batch after batch in the order fixed by their ids,
    and the gate is decided again over all of them after each batch, until it decides
    or the dataset's cases run out (docs/policy.md). Returns the run's `Submission`;
    with `wait=True` follows it and returns its `Result` (`timeout` seconds at most).
    """
    total = outside_event_loop(lambda: _continue(int(run_id)))
    submission = Submission(run_id=int(run_id), n_cases=total)
    if log is not None:
        log(f"run #{run_id}: more cases queued (up to {total:,} cases in the run)")
    if wait:
        return submission.wait(timeout=timeout, log=log, progress=progress)
    return submission


def _continue(run_id: int) -> int:
    from oloproof.cli._django import django_ready

    django_ready()
    from runs.access import LOCAL
    from runs.errors import DomainError
    from runs.services import run_continue

    try:
        return int(run_continue(user=LOCAL, run_id=run_id).cases_total)
    except DomainError as exc:
        raise OloproofError(str(exc)) from None


def _project_store() -> Any:
    from runs.store import DjangoStore

    return DjangoStore()
