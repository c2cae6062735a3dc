"""Judging: every evaluator over every case, cache first.

Per evaluator: compute each case's cache key, fetch the cached verdicts in one
batch, call the evaluator only for the rest, then cache the new verdicts in one
batch. A case whose system failed gets a missing verdict without being judged; an
evaluator that raises on a case (`SystemExit` included) makes that verdict missing,
never a failure, and so does one that runs over its time limit per verdict.

Where the evaluator's code runs: with `contained` (the run's `ContainedJudging`), every
evaluator that runs code not oloproof's own judges in processes of its own, where its
limit stops it; otherwise (`isolation="thread"`: trusted code) in this process, where a
verdict that ran over its limit is discarded once it returns.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from oloproof_core.cases.case import CaseResult
from oloproof_core.cases.context import enter_case, leave_case
from oloproof_core.cases.verdict import Verdict
from oloproof_core.errors import ConfigError, DeclarationError, UndeclaredReadError
from oloproof_core.execution.running import ProgressCallback
from oloproof_core.judging.contained._wire import failure_message
from oloproof_core.judging.evaluators import CaseView, Evaluator
from oloproof_core.judging.turns import judge_turn_by_turn
from oloproof_core.judging.verdict_checks import storable_verdict
from oloproof_core.results.store import CacheEntry, Store, verdict_key

if TYPE_CHECKING:
    from oloproof_core.judging.contained import ContainedJudging


@dataclass(slots=True)
class JudgingTally:
    """How one evaluator's verdicts came about in this run."""

    judged: int = 0
    cached: int = 0
    failed: int = 0
    skipped: int = 0

    def add(self, other: JudgingTally) -> None:
        self.judged += other.judged
        self.cached += other.cached
        self.failed += other.failed
        self.skipped += other.skipped

    def to_dict(self) -> dict[str, int]:
        return {
            "judged": self.judged,
            "cached": self.cached,
            "failed": self.failed,
            "skipped": self.skipped,
        }


SETTLED_LIMIT = 10_000
"""How many verdicts a run keeps by cache key: every distinct output of a classifier and
more; a run whose every case has its own key stops adding there."""


@dataclass(slots=True)
class SettledVerdicts:
    """The verdicts a run has settled so far, by cache key (none that is missing). A later
    batch's case with the same key takes its verdict from here rather than from the
    store, whose answer would wait behind the batches it is still writing."""

    by_key: dict[str, Verdict] = field(default_factory=dict)
    limit: int = SETTLED_LIMIT

    def keep(self, key: str, verdict: Verdict) -> None:
        if len(self.by_key) < self.limit:
            self.by_key[key] = verdict


def check_criteria(evaluators: Sequence[Evaluator]) -> None:
    seen: set[str] = set()
    for evaluator in evaluators:
        if not isinstance(evaluator, Evaluator):
            raise DeclarationError(
                f"evaluators must be evaluator objects such as ExactMatch(...) or functions "
                f"decorated with @evaluator, got {evaluator!r}"
            )
        if evaluator.criterion in seen:
            raise DeclarationError(
                f"two evaluators share the criterion "
                f"{evaluator.criterion!r}; give each a distinct criterion="
            )
        seen.add(evaluator.criterion)


def judge_cases(
    cases: Sequence[CaseResult],
    evaluators: Sequence[Evaluator],
    store: Store,
    *,
    concurrency: int,
    progress: ProgressCallback | None = None,
    settled: SettledVerdicts | None = None,
    contained: ContainedJudging | None = None,
    limit: VerdictLimit | None = None,
) -> dict[str, JudgingTally]:
    """Judge `cases` with each evaluator; `settled`: the run's verdicts from earlier
    batches, read before the store and added to; `contained`: where evaluators that run
    code not oloproof's own judge (None: in this process); `limit`: the time limit per
    verdict where they judge in this process (the contained ones have their own)."""
    settled = SettledVerdicts() if settled is None else settled
    how = _How(concurrency, progress, contained, limit or VerdictLimit(None, ""))
    tallies: dict[str, JudgingTally] = {}
    for evaluator in evaluators:
        if evaluator.per_turn:
            tallies[evaluator.criterion] = judge_turn_by_turn(
                evaluator, cases, lambda e, judged: _judge_with(e, judged, store, how, settled)
            )
        else:
            tallies[evaluator.criterion] = _judge_with(evaluator, cases, store, how, settled)
    return tallies


@dataclass(frozen=True, slots=True)
class VerdictLimit:
    """Seconds a verdict may take (None: no limit), and where that figure came from."""

    seconds: float | None
    origin: str

    def reason(self) -> str:
        """Why a verdict that ran over the limit is missing."""
        return (
            f"TimeoutError: the evaluator took longer than its {self.seconds:g} s time "
            f"limit per verdict ({self.origin})"
        )


@dataclass(frozen=True, slots=True)
class _How:
    """How one call of `judge_cases` judges: what the caller asked for."""

    concurrency: int
    progress: ProgressCallback | None
    contained: ContainedJudging | None
    limit: VerdictLimit


def _judge_with(
    evaluator: Evaluator,
    cases: Sequence[CaseResult],
    store: Store,
    how: _How,
    settled: SettledVerdicts,
) -> JudgingTally:
    evaluator.refresh()
    tally = JudgingTally()
    criterion = evaluator.criterion
    keyed = [(case, verdict_key(evaluator, case)) for case in cases if case.error is None]
    unknown = [key for key in dict.fromkeys(key for _, key in keyed) if key not in settled.by_key]
    cached = store.get_verdicts(unknown) if unknown else {}
    for key, verdict in cached.items():
        settled.keep(key, verdict)
    no_output = Verdict.failed_to_judge("not judged: the system produced no output for this case")
    for case in cases:
        if case.error is not None:
            case.verdicts[criterion] = no_output
            tally.skipped += 1
    # Cases that share a key share a verdict: each distinct key is judged once.
    waiting: dict[str, list[CaseResult]] = {}
    for case, key in keyed:
        hit = settled.by_key.get(key)
        if hit is None:
            hit = cached.get(key)
        if hit is None:
            waiting.setdefault(key, []).append(case)
        else:
            case.verdicts[criterion] = hit
            tally.cached += 1
    pending = [(sharing[0], key) for key, sharing in waiting.items()]
    fresh = _judge_pending(evaluator, pending, how)
    entries = _share_fresh(evaluator, pending, fresh, waiting, tally)
    for entry in entries:
        settled.keep(entry.key, as_cached(entry.verdict))
    if entries:
        store.put_verdicts(entries)
    return tally


def _share_fresh(
    evaluator: Evaluator,
    pending: Sequence[tuple[CaseResult, str]],
    fresh: Sequence[Verdict],
    waiting: dict[str, list[CaseResult]],
    tally: JudgingTally,
) -> list[CacheEntry]:
    """Give every case of each judged key its verdict; the cache entries to write."""
    criterion = evaluator.criterion
    entries = []
    for (first, key), verdict in zip(pending, fresh, strict=True):
        first.verdicts[criterion] = verdict
        others = waiting[key][1:]
        if verdict.missing:
            tally.failed += 1 + len(others)
            for case in others:
                case.verdicts[criterion] = verdict
            continue
        # The others read the verdict this run just cached, as a later run would.
        reused = as_cached(verdict)
        for case in others:
            case.verdicts[criterion] = reused
        tally.judged += 1
        tally.cached += len(others)
        entries.append(
            CacheEntry(
                key=key,
                evaluator_version=evaluator.version,
                criterion=criterion,
                verdict=verdict,
            )
        )
    return entries


_PASSED_CACHED = Verdict(value=1.0, cached=True)


def as_cached(verdict: Verdict) -> Verdict:
    """The verdict as a later case with its key reads it: cached (a plain pass shared)."""
    if verdict.value == 1.0 and verdict.feedback is None and not verdict.scores:
        return _PASSED_CACHED
    return Verdict(
        verdict.value, verdict.feedback, verdict.scores, verdict.error, verdict.traceback, True
    )


def judge_one(evaluator: Evaluator, case: CaseResult, limit: VerdictLimit | None = None) -> Verdict:
    """`evaluator`'s verdict of `case`, judged in this process; with `limit`, a verdict
    that took longer is discarded (a call in this process cannot be stopped)."""
    token = enter_case(case, "evaluator")
    started = time.perf_counter()
    try:
        verdict = storable_verdict(
            evaluator,
            evaluator.to_verdict(
                evaluator.judge(CaseView(case, evaluator.reads, evaluator.criterion))
            ),
        )
    except UndeclaredReadError:
        raise
    except (Exception, SystemExit) as exc:  # SystemExit here is the evaluator's, not the run's
        return _failed_to_judge(exc)
    finally:
        leave_case(token)
    seconds = None if limit is None else limit.seconds
    if limit is not None and seconds is not None and time.perf_counter() - started > seconds:
        return Verdict.failed_to_judge(limit.reason())
    return verdict


def _judge_in_thread(evaluator: Evaluator, case: CaseResult, limit: VerdictLimit) -> Verdict:
    """`judge_one` in a worker thread, where a KeyboardInterrupt can only be the
    evaluator's own (Ctrl-C reaches the main thread)."""
    try:
        return judge_one(evaluator, case, limit)
    except KeyboardInterrupt as exc:
        return _failed_to_judge(exc)


def _judge_pending(
    evaluator: Evaluator, pending: Sequence[tuple[CaseResult, str]], how: _How
) -> list[Verdict]:
    phase = f"judge {evaluator.criterion}"
    total, progress = len(pending), how.progress
    concurrency = judge_concurrency(how.concurrency)
    if total and how.contained is not None and how.contained.takes(evaluator):
        return how.contained.judge(evaluator, [case for case, _ in pending], progress)
    if getattr(evaluator, "is_async", False):
        verdicts = _run_coroutine(_judge_all_async(evaluator, pending, concurrency, how.limit))
        if progress is not None:
            progress(phase, total, total)
        return verdicts
    if not evaluator.io_bound or concurrency <= 1 or total <= 1:
        verdicts = []
        for done, (case, _) in enumerate(pending, start=1):
            verdicts.append(judge_one(evaluator, case, how.limit))
            if progress is not None and done % 1024 == 0:
                progress(phase, done, total)
        return verdicts
    return _judge_in_threads(evaluator, pending, concurrency, how)


def _judge_in_threads(
    evaluator: Evaluator, pending: Sequence[tuple[CaseResult, str]], concurrency: int, how: _How
) -> list[Verdict]:
    phase, total = f"judge {evaluator.criterion}", len(pending)
    results: list[Verdict | None] = [None] * total
    claim = itertools.count()
    failure: list[BaseException] = []

    def work() -> None:
        try:
            while (index := next(claim)) < total:
                results[index] = _judge_in_thread(evaluator, pending[index][0], how.limit)
        except BaseException as exc:  # an undeclared read: re-raised in the caller
            failure.append(exc)

    threads = [threading.Thread(target=work, daemon=True) for _ in range(min(concurrency, total))]
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():
            thread.join(0.2)
            if how.progress is not None:
                how.progress(phase, sum(r is not None for r in results), total)
    if failure:
        raise failure[0]
    return [verdict for verdict in results if verdict is not None]


def judge_concurrency(run_concurrency: int) -> int:
    """How many cases an evaluator that waits (a model judge, an async function) judges at
    once: `OLOPROOF_JUDGE_CONCURRENCY` when set, else the run's concurrency."""
    raw = os.environ.get("OLOPROOF_JUDGE_CONCURRENCY", "").strip()
    if not raw:
        return run_concurrency
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ConfigError(
            f"OLOPROOF_JUDGE_CONCURRENCY={raw!r} is not a positive whole number: set it to "
            "how many cases an evaluator that waits may judge at once (e.g. 16), or unset it "
            "to use the run's concurrency"
        )
    return value


async def _judge_all_async(
    evaluator: Evaluator,
    pending: Sequence[tuple[CaseResult, str]],
    concurrency: int,
    limit: VerdictLimit,
) -> list[Verdict]:
    """An async evaluator's cases on one event loop, at most `concurrency` at a time."""
    import asyncio  # here: a run with no async evaluator never loads it

    slots = asyncio.Semaphore(concurrency)

    async def judge(case: CaseResult) -> Verdict:
        async with slots:
            token = enter_case(case, "evaluator")
            clock = asyncio.timeout(limit.seconds)
            try:
                async with clock:
                    view = CaseView(case, evaluator.reads, evaluator.criterion)
                    raw = await evaluator.judge(view)
                return storable_verdict(evaluator, evaluator.to_verdict(raw))
            except UndeclaredReadError:
                raise
            except TimeoutError as exc:
                return (
                    Verdict.failed_to_judge(limit.reason())
                    if clock.expired()
                    else (_failed_to_judge(exc))
                )
            except (Exception, SystemExit) as exc:
                return _failed_to_judge(exc)
            finally:
                leave_case(token)

    return list(await asyncio.gather(*(judge(case) for case, _ in pending)))


def _run_coroutine(work: Coroutine[Any, Any, list[Verdict]]) -> list[Verdict]:
    """Run `work` to completion, on a thread of its own if this one already runs a loop."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="oloproof-judge") as pool:
        return pool.submit(asyncio.run, work).result()


def _failed_to_judge(exc: BaseException) -> Verdict:
    """The verdict of an evaluator that raised: missing, with what it raised and where."""
    _, said, where = failure_message(exc)
    return Verdict.failed_to_judge(said, where)
