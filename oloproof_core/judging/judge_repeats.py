"""Judging with judge repeats: each model judge asked `j` times per output.

`judge_repeatedly` judges a batch of cases as `judge_cases` does, except for each
`RepeatedJudge` (`judging/evaluators/_judge_repeat.py`): its j askings judge the cases
one after the other, each through the cache under its own version, and each case's
verdict for the criterion becomes the mean of the askings that gave one. The askings'
values are returned as well, per criterion and case, for the variance split
(`evaluation/judge_variance.py`).

An asking that failed (the judge's reply unreadable, its call failed) is left out of
the mean; a case none of whose askings gave a verdict is missing, with the first
asking's reason.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from oloproof_core.cases.case import CaseResult
from oloproof_core.cases.verdict import Verdict
from oloproof_core.judging.evaluators import Evaluator
from oloproof_core.judging.evaluators._judge_repeat import RepeatedJudge, judged_by_model
from oloproof_core.judging.judge import JudgingTally, judge_cases
from oloproof_core.results.store import Store

AskedValues = dict[str, dict[str, list[float | None]]]
"""Per criterion, per case id: each asking's value (None where it gave no verdict)."""


def with_judge_repeats(evaluators: Sequence[Evaluator], repeats: int) -> list[Evaluator]:
    """`evaluators` with each model judge asked `repeats` times (the rest judge once)."""
    if repeats == 1:
        return list(evaluators)
    return [
        RepeatedJudge(evaluator, repeats) if judged_by_model(evaluator) else evaluator
        for evaluator in evaluators
    ]


def judge_repeatedly(
    cases: Sequence[CaseResult], evaluators: Sequence[Evaluator], store: Store, **how: Any
) -> tuple[dict[str, JudgingTally], AskedValues]:
    """`judge_cases` over `cases` (`how`: its options), each `RepeatedJudge` asked its
    number of times; returns the tallies and each asking's values."""
    once = [evaluator for evaluator in evaluators if not isinstance(evaluator, RepeatedJudge)]
    tallies = judge_cases(cases, once, store, **how) if once else {}
    asked: AskedValues = {}
    for evaluator in evaluators:
        if isinstance(evaluator, RepeatedJudge):
            tally, values = _ask_repeatedly(evaluator, cases, store, how)
            tallies[evaluator.criterion] = tally
            asked[evaluator.criterion] = values
    return {e.criterion: tallies[e.criterion] for e in evaluators}, asked


def _ask_repeatedly(
    judge: RepeatedJudge, cases: Sequence[CaseResult], store: Store, how: dict[str, Any]
) -> tuple[JudgingTally, dict[str, list[float | None]]]:
    criterion = judge.criterion
    tally = JudgingTally()
    verdicts: list[list[Verdict]] = [[] for _ in cases]
    for asking in judge.askings:
        found = judge_cases(cases, [asking], store, **how)[criterion]
        if asking.asking > 1:
            found.skipped = 0  # a case with no output is one case skipped, not one per asking
        tally.add(found)
        for index, case in enumerate(cases):
            verdicts[index].append(case.verdicts[criterion])
    for case, asked in zip(cases, verdicts, strict=True):
        case.verdicts[criterion] = mean_verdict(asked)
    values = {
        case.id: [verdict.value for verdict in asked]
        for case, asked in zip(cases, verdicts, strict=True)
        if case.error is None
    }
    return tally, values


def mean_verdict(asked: Sequence[Verdict]) -> Verdict:
    """One output's verdict from its askings: the mean of those that gave a value."""
    given = [verdict for verdict in asked if verdict.value is not None]
    if not given:
        return asked[0]
    values = [verdict.value for verdict in given if verdict.value is not None]
    names = dict.fromkeys(name for verdict in given for name in verdict.scores)
    scores = {
        name: math.fsum(v.scores[name] for v in given if name in v.scores)
        / sum(1 for v in given if name in v.scores)
        for name in names
    }
    said = [verdict.feedback if verdict.value is not None else verdict.error for verdict in asked]
    feedback = "\n".join(
        f"judge repeat {index}: {text}" for index, text in enumerate(said, start=1) if text
    )
    return Verdict(
        value=math.fsum(values) / len(values),
        feedback=feedback or None,
        scores=scores,
        cached=all(verdict.cached for verdict in asked),
    )
