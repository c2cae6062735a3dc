"""Judge repeats: a model judge asked several times about one output.

A model judge that samples can pass an output once and fail it the next time. With
`judge_repeats: j` the run asks it j times about every output and scores the criterion
by the mean over those verdicts. Two evaluators carry that:

- `JudgeRepeat`, one of the j askings: the judge itself under a version of its own for
  the second and later asking (the first keeps the judge's), so the verdict cache,
  which keys on the version, never hands one asking another's verdict;
- `RepeatedJudge`, the criterion as the run reports it: a score, the mean over the j
  verdicts. A pass/fail judge's mean is the share of PASS verdicts, a score from 0 to 1
  (no longer a plain pass or fail, so its metric is estimated as a bounded score).

Only model judges (`RubricJudge`) are asked again: every other evaluator judges one
output the same way each time, so it is judged once.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from functools import cached_property
from typing import Any

from oloproof_core._util.canonical import digest_text
from oloproof_core.judging.evaluators._base import Evaluator
from oloproof_core.judging.evaluators._case_view import CaseView


def judged_by_model(evaluator: Evaluator) -> bool:
    """Whether `evaluator` asks a model, whose verdicts can differ from one asking to the next."""
    # Not imported for the question: a run with no model judge never loads the model
    # client, and no evaluator can be a RubricJudge before its module is loaded.
    module = sys.modules.get("oloproof_core.judging.evaluators._rubric_judge")
    return module is not None and isinstance(evaluator, module.RubricJudge)


class JudgeRepeat(Evaluator):
    """The `asking`th asking (1, 2, ...) of `judge` about each output."""

    io_bound = True

    def __init__(self, judge: Evaluator, asking: int) -> None:
        super().__init__(
            criterion=judge.criterion,
            reads=judge.reads,
            value_type=judge.value_type,
            score_range=judge.score_range,
        )
        self.judge_asked = judge
        self.asking = asking
        self.is_async = judge.is_async

    @property
    def kind(self) -> str:
        return self.judge_asked.kind

    def parameters(self) -> Mapping[str, Any]:
        return self.judge_asked.parameters()

    def source_object(self) -> Any:
        return self.judge_asked.source_object()

    @cached_property
    def version(self) -> str:
        if self.asking == 1:
            return self.judge_asked.version
        return digest_text(f"{self.judge_asked.version}|judge_repeat={self.asking}")[:32]

    def refresh(self) -> None:
        before = self.judge_asked.version
        self.judge_asked.refresh()
        if self.judge_asked.version != before:
            self.__dict__.pop("version", None)

    def judge(self, case: CaseView) -> Any:
        return self.judge_asked.judge(case)

    def to_verdict(self, raw: Any) -> Any:
        return self.judge_asked.to_verdict(raw)


class RepeatedJudge(Evaluator):
    """`judge` asked `repeats` times per output; the criterion's value is their mean."""

    io_bound = True

    def __init__(self, judge: Evaluator, repeats: int) -> None:
        pass_fail = judge.value_type == "pass_fail"
        super().__init__(
            criterion=judge.criterion,
            reads=judge.reads,
            value_type="score",
            score_range=(0.0, 1.0) if pass_fail else judge.score_range,
        )
        self.judge_asked = judge
        self.repeats = repeats
        self.askings = [JudgeRepeat(judge, asking) for asking in range(1, repeats + 1)]

    @property
    def kind(self) -> str:
        return self.judge_asked.kind

    @property
    def sub_score_range(self) -> tuple[float, float]:
        return self.judge_asked.sub_score_range

    def parameters(self) -> Mapping[str, Any]:
        return {
            **self.judge_asked.parameters(),
            "judge_repeats": self.repeats,
            "each_verdict": self.judge_asked.value_type,
        }

    def source_object(self) -> Any:
        return self.judge_asked.source_object()

    def refresh(self) -> None:
        for asking in self.askings:
            asking.refresh()
        self.__dict__.pop("version", None)

    def judge(self, case: CaseView) -> Any:
        raise TypeError(
            "a RepeatedJudge judges through its askings (oloproof_core.judging.judge_repeats)"
        )
