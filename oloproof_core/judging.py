"""Judging: every evaluator over every case, cache first.

Per evaluator: compute each case's cache key, fetch the cached verdicts in one
batch, call the evaluator only for the rest, then cache the new verdicts in one
batch. A case whose system failed gets a missing verdict without being judged; an
evaluator that raises on a case makes that verdict missing, never a failure.
"""

from __future__ import annotations

import itertools
import threading
import traceback
from collections.abc import Sequence
from dataclasses import dataclass

from oloproof_core.case import CaseResult
from oloproof_core.context import enter_case, leave_case
from oloproof_core.errors import DeclarationError, UndeclaredReadError
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
) -> dict[str, JudgingTally]:
    tallies: dict[str, JudgingTally] = {}
    for evaluator in evaluators:
        tallies[evaluator.criterion] = _judge_with(evaluator, cases, store, concurrency, progress)
    return tallies


def _judge_with(
    evaluator: Evaluator,
    cases: Sequence[CaseResult],
    store: Store,
    concurrency: int,
    progress: ProgressCallback | None,
) -> JudgingTally:
    evaluator.refresh()
    tally = JudgingTally()
    criterion = evaluator.criterion
    keyed = [(case, verdict_key(evaluator, case)) for case in cases if case.error is None]
    cached = store.get_verdicts([key for _, key in keyed])
    no_output = Verdict.failed_to_judge("not judged: the system produced no output for this case")
    for case in cases:
        if case.error is not None:
            case.verdicts[criterion] = no_output
            tally.skipped += 1
    pending: list[tuple[CaseResult, str]] = []
    for case, key in keyed:
        hit = cached.get(key)
        if hit is None:
            pending.append((case, key))
        else:
            case.verdicts[criterion] = hit
            tally.cached += 1
    fresh = _judge_pending(evaluator, pending, concurrency, progress)
    entries = []
    for (case, key), verdict in zip(pending, fresh, strict=True):
        case.verdicts[criterion] = verdict
        if verdict.missing:
            tally.failed += 1
        else:
            tally.judged += 1
            entries.append(
                CacheEntry(
                    key=key,
                    evaluator_version=evaluator.version,
                    criterion=criterion,
                    verdict=verdict,
                )
            )
    if entries:
        store.put_verdicts(entries)
    return tally


def judge_one(evaluator: Evaluator, case: CaseResult) -> Verdict:
    token = enter_case(case, "evaluator")
    try:
        return evaluator.to_verdict(
            evaluator.judge(CaseView(case, evaluator.reads, evaluator.criterion))
        )
    except UndeclaredReadError:
        raise
    except Exception as exc:
        return Verdict.failed_to_judge(
            f"{type(exc).__name__}: {exc}", "".join(traceback.format_exception(exc))
        )
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
