"""RubricJudge: a model grades each output against a written rubric.

The judge model (role `judge`, falling back to the metric and reflection models)
answers with a small JSON object; anything else makes the verdict missing with the
reply quoted, never a silent pass or fail. The rubric, the prompt and the judge
model's identity (its name and endpoint) are part of the version, so verdicts are
cached until one of them changes.
"""

from __future__ import annotations

import json
import re
from typing import Any

from oloproof_core._util.canonical import canonical_json, digest_text
from oloproof_core.cases.verdict import Verdict
from oloproof_core.errors import ContractError
from oloproof_core.judging.evaluators._base import Evaluator, ValueType
from oloproof_core.judging.evaluators._case_view import CaseView
from oloproof_core.models import chat, model_identity

INSTRUCTIONS = """\
You are a strict evaluator. Grade the output against the rubric.
Reply with one JSON object and nothing else:
{answer_format}
The reason says what is wrong and what a correct output looks like."""

_PASS_FAIL_FORMAT = '{"verdict": "PASS" or "FAIL", "reason": "<one or two sentences>"}'
_SCORE_FORMAT = (
    '{{"score": <a number from {low:g} to {high:g}>, "reason": "<one or two sentences>"}}'
)

CASE_TEMPLATE = """\
Rubric:
{rubric}

Input:
{input}

Output:
{output}"""
EXPECTED_TEMPLATE = """

Reference answer:
{expected}"""

_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


class RubricJudge(Evaluator):
    """Ask the judge model whether (or how well) each output meets `rubric`.

    `value_type="pass_fail"` (default) expects PASS/FAIL; `value_type="score"`
    expects a number in `score_range`. With `with_expected=True` the row's expected
    object is shown to the judge as a reference answer.
    """

    io_bound = True

    def __init__(
        self,
        *,
        criterion: str,
        rubric: str,
        value_type: ValueType = "pass_fail",
        score_range: tuple[float, float] = (0.0, 1.0),
        with_expected: bool = False,
        role: str = "judge",
        temperature: float = 0.0,
        per_turn: bool = False,
    ) -> None:
        reads = ("input", "output", "expected") if with_expected else ("input", "output")
        super().__init__(
            criterion=criterion,
            reads=reads,
            value_type=value_type,
            score_range=score_range,
            per_turn=per_turn,
        )
        if not isinstance(rubric, str) or not rubric.strip():
            raise ContractError(
                f"RubricJudge(criterion={criterion!r}): rubric must be a "
                "non-empty string describing what a good output does"
            )
        self.rubric = rubric
        self.with_expected = with_expected
        self.role = role
        self.temperature = temperature
        self._model = self._model_identity()

    @property
    def kind(self) -> str:
        return "RubricJudge"

    def parameters(self) -> dict[str, Any]:
        return {
            "rubric": self.rubric,
            "prompt": digest_text(self.instructions() + CASE_TEMPLATE + EXPECTED_TEMPLATE),
            "model": self._model["model"],
            "base_url": self._model["base_url"],
            "role": self.role,
            "temperature": self.temperature,
            "with_expected": self.with_expected,
        }

    def refresh(self) -> None:
        """A different judge model or endpoint since the last run means a new version."""
        model = self._model_identity()
        if model != self._model:
            self._model = model
            self.__dict__.pop("version", None)

    def instructions(self) -> str:
        if self.value_type == "pass_fail":
            answer_format = _PASS_FAIL_FORMAT
        else:
            low, high = self.score_range
            answer_format = _SCORE_FORMAT.format(low=low, high=high)
        return INSTRUCTIONS.format(answer_format=answer_format)

    def prompt(self, case: CaseView) -> str:
        text = CASE_TEMPLATE.format(
            rubric=self.rubric, input=_as_text(case.input), output=_as_text(case.output)
        )
        if self.with_expected:
            text += EXPECTED_TEMPLATE.format(expected=_as_text(case.expected))
        return text

    def judge(self, case: CaseView) -> Verdict:
        reply = chat(
            [
                {"role": "system", "content": self.instructions()},
                {"role": "user", "content": self.prompt(case)},
            ],
            role=self.role,
            temperature=self.temperature,
        )
        return self.read_reply(reply.text)

    def read_reply(self, text: str) -> Verdict:
        """Turn the judge's reply into a verdict; a reply of any other shape is an error."""
        answer = _json_object(text)
        reason = answer.get("reason") if answer is not None else None
        if answer is None or not isinstance(reason, str):
            raise ContractError(
                f"judge reply is not the JSON object asked for "
                f"({self._expected_shape()}): {_excerpt(text)}"
            )
        if self.value_type == "pass_fail":
            verdict = answer.get("verdict")
            word = verdict.strip().upper() if isinstance(verdict, str) else None
            if word not in ("PASS", "FAIL"):
                raise ContractError(
                    f"judge reply has verdict {verdict!r}, not PASS or FAIL: {_excerpt(text)}"
                )
            return Verdict(value=1.0 if word == "PASS" else 0.0, feedback=reason)
        return Verdict(value=self.check_score(answer.get("score")), feedback=reason)

    def range_hint(self) -> str:
        return "the judge answered outside the range it was given; check the judge model"

    def _expected_shape(self) -> str:
        return (
            _PASS_FAIL_FORMAT if self.value_type == "pass_fail" else '{"score": ..., "reason": ...}'
        )

    def _model_identity(self) -> dict[str, str | None]:
        identity = model_identity(self.role)
        if identity["model"] is None:
            # Not configured yet: the version still exists, and each judged case says why
            # it is missing.
            return {"model": "unconfigured", "base_url": None}
        return identity


def _json_object(text: str) -> dict[str, Any] | None:
    match = _JSON_OBJECT.search(text)
    if match is None:
        return None
    try:
        value = json.loads(match.group(0))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return canonical_json(value)
    except (TypeError, ValueError):
        return repr(value)


def _excerpt(text: str) -> str:
    return repr(text[:300] + ("…" if len(text) > 300 else ""))
