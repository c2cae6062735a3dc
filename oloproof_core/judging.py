"""Judging: every evaluator over every case, cache first.

Per evaluator: compute each case's cache key, fetch the cached verdicts in one
batch, call the evaluator only for the rest, then cache the new verdicts in one
batch. A case whose system failed gets a missing verdict without being judged; an
evaluator that raises on a case makes that verdict missing, never a failure.
"""

from __future__ import annotations

import itertools
import os
import threading
import traceback
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from oloproof_core.case import CaseResult
from oloproof_core.context import enter_case, leave_case
from oloproof_core.errors import ConfigError, DeclarationError, UndeclaredReadError
from oloproof_core.evaluators import CaseView, Evaluator
from oloproof_core.execution import ProgressCallback
from oloproof_core.store import CacheEntry, Store, verdict_key
from oloproof_core.verdict import Verdict


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
) -> dict[str, JudgingTally]:
    """Judge `cases` with each evaluator; `settled`: the run's verdicts from earlier
    batches, read before the store and added to."""
    settled = SettledVerdicts() if settled is None else settled
    tallies: dict[str, JudgingTally] = {}
    for evaluator in evaluators:
        tallies[evaluator.criterion] = _judge_with(
            evaluator, cases, store, concurrency, progress, settled
        )
    return tallies


def _judge_with(
    evaluator: Evaluator,
    cases: Sequence[CaseResult],
    store: Store,
    concurrency: int,
    progress: ProgressCallback | None,
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
    fresh = _judge_pending(evaluator, pending, concurrency, progress)
    entries = _share_fresh(evaluator, pending, fresh, waiting, tally)
    for entry in entries:
        settled.keep(entry.key, replace(entry.verdict, cached=True))
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
        reused = replace(verdict, cached=True)
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


def judge_one(evaluator: Evaluator, case: CaseResult) -> Verdict:
    token = enter_case(case, "evaluator")
    try:
        return evaluator.to_verdict(
            evaluator.judge(CaseView(case, evaluator.reads, evaluator.criterion))
        )
    except UndeclaredReadError:
        raise
    except Exception as exc:
        return _failed_to_judge(exc)
    finally:
        leave_case(token)


def _judge_pending(
    evaluator: Evaluator,
    pending: Sequence[tuple[CaseResult, str]],
    concurrency: int,
    progress: ProgressCallback | None,
) -> list[Verdict]:
    phase = f"judge {evaluator.criterion}"
    total = len(pending)
    concurrency = judge_concurrency(concurrency)
    if getattr(evaluator, "is_async", False):
        verdicts = _run_coroutine(_judge_all_async(evaluator, pending, concurrency))
        if progress is not None:
            progress(phase, total, total)
        return verdicts
    if not evaluator.io_bound or concurrency <= 1 or total <= 1:
        verdicts = []
        for done, (case, _) in enumerate(pending, start=1):
            verdicts.append(judge_one(evaluator, case))
            if progress is not None and done % 1024 == 0:
                progress(phase, done, total)
        return verdicts
    results: list[Verdict | None] = [None] * total
    claim = itertools.count()
    failure: list[BaseException] = []

    def work() -> None:
        try:
            while (index := next(claim)) < total:
                results[index] = judge_one(evaluator, pending[index][0])
        except BaseException as exc:  # an undeclared read: re-raised in the caller
            failure.append(exc)

    threads = [threading.Thread(target=work, daemon=True) for _ in range(min(concurrency, total))]
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():
            thread.join(0.2)
            if progress is not None:
                progress(phase, sum(r is not None for r in results), total)
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
    evaluator: Evaluator, pending: Sequence[tuple[CaseResult, str]], concurrency: int
) -> list[Verdict]:
    """An async evaluator's cases on one event loop, at most `concurrency` at a time."""
    import asyncio  # here: a run with no async evaluator never loads it

    limit = asyncio.Semaphore(concurrency)

    async def judge(case: CaseResult) -> Verdict:
        async with limit:
            token = enter_case(case, "evaluator")
            try:
                raw = await evaluator.judge(CaseView(case, evaluator.reads, evaluator.criterion))
                return evaluator.to_verdict(raw)
            except UndeclaredReadError:
                raise
            except Exception as exc:
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


def _failed_to_judge(exc: Exception) -> Verdict:
    """The verdict of an evaluator that raised: missing, with what it raised and where."""
    return Verdict.failed_to_judge(
        f"{type(exc).__name__}: {exc}", "".join(traceback.format_exception(exc))
    )
