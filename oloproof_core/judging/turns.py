"""Judging a conversation turn by turn, for evaluators declared with `per_turn=True`.

Each turn is judged as a case of its own, as the system saw it: its input the row's
other input keys and `messages`, the conversation up to the user's message; its output
the system's reply as returned; its expected value the row's `expected["turns"][n]`
(the whole expected object when the row gives no list per turn); its artifacts what the
system attached in that turn. Turn verdicts go through the cache like any (keyed on
those parts), and evaluators that run code judge them in their own processes.

The conversation is the unit the figures count, so each conversation gets one verdict
folded from its turns': a pass/fail criterion passes when every turn passed, with the
share of turns passed as the sub-score `turns_passed`; a score is the turns' mean (and
each sub-score the mean of the turns'). A missing turn verdict makes the conversation's
missing, naming the turn. A single case is its one turn: its verdict is its own, with
`turns_passed` for a pass/fail criterion, so every case of a run has the same metrics.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from statistics import fmean
from typing import Any, TypeVar

from oloproof_core._util.canonical import canonical_json
from oloproof_core.cases.case import CaseResult
from oloproof_core.cases.verdict import Verdict
from oloproof_core.datasets.conversations import MESSAGES, conversation_of
from oloproof_core.execution.turns import REPLIES, TURNS_ARTIFACT, turn_id
from oloproof_core.judging.evaluators import Evaluator

Tally = TypeVar("Tally")
TURNS_PASSED = "turns_passed"
_FEEDBACK_PER_TURN = 300


def judge_turn_by_turn(
    evaluator: Evaluator,
    cases: Sequence[CaseResult],
    judge_with: Callable[[Evaluator, Sequence[CaseResult]], Tally],
) -> Tally:
    """Judge each conversation's turns with `judge_with` (single cases as they are), then
    give each case its folded verdict; returns `judge_with`'s tally (of turn verdicts)."""
    turns_of: dict[int, list[CaseResult]] = {}
    judged: list[CaseResult] = []
    for index, case in enumerate(cases):
        turns = turn_cases(case) if case.error is None else None
        if turns is None:
            judged.append(case)
        else:
            turns_of[index] = turns
            judged += turns
    tally = judge_with(evaluator, judged)
    criterion = evaluator.criterion
    for index, case in enumerate(cases):
        if case.error is not None:
            continue  # its verdict says it was not judged
        turns = turns_of.get(index)
        if turns is None:
            case.verdicts[criterion] = folded(evaluator, [case.verdicts[criterion]])
            continue
        case.verdicts[criterion] = folded(evaluator, [turn.verdicts[criterion] for turn in turns])
        for turn in turns:  # a judge's calls for a turn are its conversation's
            case.measurements.model_calls.extend(turn.measurements.model_calls)
    return tally


def turn_cases(case: CaseResult) -> list[CaseResult] | None:
    """A conversation case's turns as cases (see the module docstring); None for a case
    that is not a conversation, or whose output is not a conversation's."""
    plan = conversation_of(case.input, case.expected)
    output = case.output
    if plan is None or not isinstance(output, Mapping):
        return None
    messages, replies = output.get(MESSAGES), output.get(REPLIES)
    if not isinstance(messages, list) or not isinstance(replies, list):
        return None
    figures = case.artifacts.get(TURNS_ARTIFACT)
    figures = figures if isinstance(figures, list) else []
    turns = []
    for index, reply in enumerate(replies):
        expected = case.expected
        if plan.expected_turns is not None and index < len(plan.expected_turns):
            expected = plan.expected_turns[index]
        own = figures[index] if index < len(figures) else None
        attached = own.get("artifacts") if isinstance(own, Mapping) else None
        turns.append(
            CaseResult(
                id=turn_id(case.id, index + 1),
                input={**plan.context, MESSAGES: messages[: 2 * index + 1]},
                expected=expected,
                split=case.split,
                cluster=case.cluster,
                output=reply,
                output_json=canonical_json(reply),
                artifacts=dict(attached) if isinstance(attached, Mapping) else {},
                repeat=case.repeat,
            )
        )
    return turns


def folded(evaluator: Evaluator, verdicts: Sequence[Verdict]) -> Verdict:
    """One verdict for a conversation from its turns' (module docstring)."""
    several = len(verdicts) > 1
    for number, verdict in enumerate(verdicts, start=1):
        if verdict.missing:
            error = verdict.error or "missing"
            return Verdict.failed_to_judge(
                f"turn {number}: {error}" if several else error, verdict.traceback
            )
    values = [float(verdict.value or 0.0) for verdict in verdicts]
    scores = _mean_sub_scores(verdicts)
    if evaluator.value_type == "pass_fail":
        passed = [value >= 1.0 for value in values]
        value = 1.0 if all(passed) else 0.0
        scores[TURNS_PASSED] = sum(passed) / len(passed)
    else:
        value = fmean(values)
    feedback = _feedback(evaluator, verdicts) if several else verdicts[0].feedback
    cached = all(verdict.cached for verdict in verdicts)
    return Verdict(value=value, feedback=feedback, scores=scores, cached=cached)


def _mean_sub_scores(verdicts: Sequence[Verdict]) -> dict[str, float]:
    names = dict.fromkeys(name for verdict in verdicts for name in verdict.scores)
    means = {}
    for name in names:
        found = [verdict.scores[name] for verdict in verdicts if name in verdict.scores]
        means[name] = fmean(found)
    return means


def _feedback(evaluator: Evaluator, verdicts: Sequence[Verdict]) -> str:
    lines = []
    for number, verdict in enumerate(verdicts, start=1):
        value = float(verdict.value or 0.0)
        if evaluator.value_type == "pass_fail":
            said = "passed" if value >= 1.0 else "failed"
        else:
            said = f"scored {value:g}"
        note = _short(verdict.feedback)
        lines.append(f"turn {number}: {said}" + (f" — {note}" if note else ""))
    return "\n".join(lines)


def _short(feedback: Any) -> str:
    if not isinstance(feedback, str):
        return ""
    text = " ".join(feedback.split())
    return text if len(text) <= _FEEDBACK_PER_TURN else text[: _FEEDBACK_PER_TURN - 1] + "…"
