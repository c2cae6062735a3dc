"""TrajectoryJudge: a model reads the whole transcript and grades it against a rubric.

A `RubricJudge` that is shown, beside the input and the output, every step the agent
took: the messages it sent, each model call's reply and tool calls, each tool's result
and the system's own steps. Its calls are the judge role's (metered as such, never the
system's cost), and its verdicts are cached on the transcript's digest.
"""

from __future__ import annotations

from typing import Any

from oloproof_core._util.canonical import canonical_json, digest_text
from oloproof_core.cases.transcript import Transcript
from oloproof_core.cases.transcript_caps import clip_text
from oloproof_core.judging.evaluators._base import ValueType
from oloproof_core.judging.evaluators._case_view import CaseView
from oloproof_core.judging.evaluators._rubric_judge import RubricJudge, _as_text

TRAJECTORY_TEMPLATE = """\
Rubric:
{rubric}

Input:
{input}

What the agent did, step by step:
{steps}

Final output:
{output}"""
SHOWN_CAP = 60_000
"""Characters of the transcript shown to the judge; the rest is cut with a mark."""


class TrajectoryJudge(RubricJudge):
    """Ask the judge model whether (or how well) the agent's whole trajectory meets `rubric`."""

    def __init__(
        self,
        *,
        criterion: str,
        rubric: str,
        value_type: ValueType = "pass_fail",
        score_range: tuple[float, float] = (0.0, 1.0),
        role: str = "judge",
        temperature: float = 0.0,
    ) -> None:
        super().__init__(
            criterion=criterion,
            rubric=rubric,
            value_type=value_type,
            score_range=score_range,
            role=role,
            temperature=temperature,
        )
        self.reads = ("input", "output", "trace")

    @property
    def kind(self) -> str:
        return "TrajectoryJudge"

    def parameters(self) -> dict[str, Any]:
        parameters = super().parameters()
        parameters.pop("with_expected", None)
        parameters["prompt"] = digest_text(self.instructions() + TRAJECTORY_TEMPLATE)
        return parameters

    def prompt(self, case: CaseView) -> str:
        return TRAJECTORY_TEMPLATE.format(
            rubric=self.rubric,
            input=_as_text(case.input),
            steps=transcript_text(case.trace),
            output=_as_text(case.output),
        )


def transcript_text(transcript: Transcript) -> str:
    """The transcript as numbered lines a model can read, cut to `SHOWN_CAP` characters."""
    lines = [_step_line(index, step) for index, step in enumerate(transcript.steps, start=1)]
    if not lines:
        lines = ["(no steps: the system made no model call and reported no step)"]
    lines += [f"(cut: {cut})" for cut in transcript.cuts]
    lines += [f"(flagged: {flag})" for flag in transcript.flags]
    text, _ = clip_text("\n".join(lines), SHOWN_CAP)
    return text


def _step_line(index: int, step: dict[str, Any]) -> str:
    kind = step.get("kind")
    if kind == "system_step":
        data = canonical_json(step.get("data"))
        return f"{index}. the system's own step {step.get('name')!r}: {data}"
    if kind == "tool_result":
        tool = step.get("name") or step.get("tool_call_id")
        return f"{index}. tool result of {tool}: {step.get('text')}"
    if kind == "model_call":
        calls = "; ".join(
            f"{call.get('name')}({call.get('arguments')})" for call in step.get("tool_calls") or ()
        )
        said = step.get("text") or ""
        asked = f" asked for tools: {calls}" if calls else ""
        error = f" failed: {step['error']}" if step.get("error") else ""
        return f"{index}. the model replied: {said!r}{asked}{error}"
    return f"{index}. {step.get('role')} message: {step.get('text')}"
