"""DSPy: a program as the system under test, and a metric file as a DSPy/GEPA metric.

Needs the optional extra: `pip install 'oloproof[dspy]'`.

    system = dspy_system(program, name="qa", version="2")        # for oloproof.evaluate
    metric = dspy_metric("metric.py")                            # for dspy.Evaluate / dspy.GEPA
    devset = dspy_examples("data/qa.jsonl")                      # the same rows, as Examples

The program is called with the row's input as keyword arguments, and its
Prediction becomes the output: the value of its one field for a one-field program
(`question -> label` gives "refund", so `output == expected["label"]` reads as the
metric page writes it), a dict of its fields otherwise. The metric file sees the same
`output` whichever engine calls it. Called the way `dspy.Evaluate` calls a metric,
`metric(example, prediction)`, it returns the score as a float, or, when the metric
returns sub-scores, `dspy.Prediction(score=..., feedback=..., objective_scores=...)`
(DSPy adds and compares it as its score, and GEPA keeps the sub-scores as objective
scores); called the way GEPA asks for feedback (with `pred_name` / `pred_trace`), it
returns that Prediction always. Each call judges a case whose measurements are the
program's time (`dspy_timing`) and model usage, so `observation()` and `reward`
work under DSPy.

Cost: the program's language-model calls are counted with DSPy's usage tracker
and priced with `price_in` / `price_out` (USD per million tokens), or else with the
system role's prices; without a price the cost is unmeasured (None), never 0.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from oloproof_core._util.canonical import canonical_json, digest_text
from oloproof_core.cases.case import CaseResult
from oloproof_core.cases.context import current_case_or_none
from oloproof_core.cases.observations import ModelCall
from oloproof_core.datasets.dataset import load_dataset
from oloproof_core.errors import ContractError, DeclarationError
from oloproof_core.execution.systems import System
from oloproof_core.judging.evaluators._metric_file import MetricFile
from oloproof_core.judging.judge import judge_cases, judge_one
from oloproof_core.models import ModelError, settings_for
from oloproof_core.optimize._dspy_timing import program_timer
from oloproof_core.results.store import Store

_NOT_GIVEN: Any = object()


def _dspy() -> Any:
    try:
        import dspy
    except ImportError:
        raise DeclarationError("DSPy is not installed: pip install 'oloproof[dspy]'") from None
    return dspy


def dspy_system(
    program: Any,
    *,
    name: str,
    version: str | None = None,
    price_in: float | None = None,
    price_out: float | None = None,
    lm: Any = None,
) -> System:
    """Wrap a DSPy program (any callable module) as a system oloproof can evaluate.

    With `lm`, the program runs with that language model whatever thread runs it
    (DSPy's `dspy.context` does not follow a call into the engine's worker threads).
    """
    _dspy()  # a clear error now when DSPy is not installed
    if not callable(program):
        raise DeclarationError(
            f"dspy_system() takes a DSPy program (a dspy.Module), got {type(program).__name__}"
        )

    run = _ProgramCall(program, lm, price_in, price_out)
    return System(
        run,
        name=name,
        version=version,
        import_path=f"{type(program).__module__}:{type(program).__qualname__}",
    )


class _ProgramCall:
    """The system's function: the program called with the case's input as keywords.

    It travels to the system's sandboxed process by value; DSPy's configured language
    model is a setting of this process, so it travels with it, taken when it is sent,
    without the provider's address and key it was given: in the sandbox its calls go
    to the metering gateway (the system role's provider, `OLOPROOF_SYSTEM_*`), the only
    address there, with the gateway's key.
    """

    def __init__(
        self, program: Any, lm: Any, price_in: float | None, price_out: float | None
    ) -> None:
        self.program, self.lm = program, lm
        self.price_in, self.price_out = price_in, price_out
        self.through_gateway = False
        self.__name__ = self.__qualname__ = getattr(program, "__name__", type(program).__name__)

    def __call__(self, case_input: Mapping[str, Any]) -> Any:
        if not isinstance(case_input, Mapping):
            raise ContractError(
                f"a DSPy program takes keyword arguments, so the row's input "
                f"must be an object, got {type(case_input).__name__}"
            )
        dspy = _dspy()
        lm = self.lm
        if self.through_gateway and os.environ.get("OPENAI_BASE_URL"):
            lm = lm.copy(
                api_base=os.environ["OPENAI_BASE_URL"], api_key=os.environ.get("OPENAI_API_KEY")
            )
        with dspy.context(track_usage=True, **({} if lm is None else {"lm": lm})):
            prediction = self.program(**case_input)
        _record_usage(prediction, self.price_in, self.price_out)
        return prediction_output(prediction)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        lm = state["lm"] if state["lm"] is not None else _dspy().settings.lm
        kwargs = getattr(lm, "kwargs", None)
        if isinstance(kwargs, dict) and ({"api_base", "api_key"} & set(kwargs)):
            lm = lm.copy()
            for name in ("api_base", "api_key"):
                lm.kwargs.pop(name, None)
            state["through_gateway"] = True
        state["lm"] = lm
        return state


def prediction_fields(prediction: Any) -> dict[str, Any]:
    """A Prediction's output fields as a plain dict (what evaluators and metrics see)."""
    if hasattr(prediction, "toDict"):
        return dict(prediction.toDict())
    if isinstance(prediction, Mapping):
        return dict(prediction)
    raise ContractError(
        f"expected a dspy.Prediction from the program, got {type(prediction).__name__}"
    )


def prediction_output(prediction: Any) -> Any:
    """What evaluators and metrics see as `output`: a one-field program's value, else the
    dict of its fields."""
    fields = prediction_fields(prediction)
    return next(iter(fields.values())) if len(fields) == 1 else fields


class DspyMetric:
    """A metric file called the way DSPy calls metrics.

    Each call judges a case built from the example and the prediction, with the
    program's model calls (from DSPy's usage tracker, when it is on) as the case's
    measurements, so `observation()` and `reward` work under DSPy too. Called for
    feedback it returns the score, the feedback and the sub-scores (as GEPA's
    `objective_scores`). With a `store`, verdicts go through the verdict cache, and
    `on_judged` sees every judged case.
    """

    def __init__(
        self,
        metric: MetricFile,
        *,
        store: Store | None = None,
        on_judged: Callable[[CaseResult], None] | None = None,
    ) -> None:
        self.metric = metric
        self.store = store
        self.on_judged = on_judged
        self.__name__ = metric.criterion
        self.timer = program_timer(_dspy())

    def __call__(
        self,
        example: Any,
        prediction: Any,
        trace: Any = None,
        pred_name: Any = _NOT_GIVEN,
        pred_trace: Any = _NOT_GIVEN,
    ) -> Any:
        case = case_for(example, prediction)
        if self.timer is not None:
            case.measurements.latency_ms = self.timer.elapsed_ms(prediction)
        if self.store is not None:
            judge_cases([case], [self.metric], self.store, concurrency=1)
            verdict = case.verdicts[self.metric.criterion]
        else:
            verdict = judge_one(self.metric, case)
            case.verdicts[self.metric.criterion] = verdict
        if self.on_judged is not None:
            self.on_judged(case)
        score = float(verdict.value if verdict.value is not None else 0.0)
        if pred_name is _NOT_GIVEN and pred_trace is _NOT_GIVEN and not verdict.scores:
            return score
        return _dspy().Prediction(
            score=score,
            feedback=verdict.feedback or verdict.error or "",
            objective_scores=dict(verdict.scores),
        )


def case_for(example: Any, prediction: Any) -> CaseResult:
    """The case a metric call judges: the example's inputs and labels, the prediction, usage."""
    inputs = _example_inputs(example)
    case = CaseResult(
        id=digest_text(canonical_json(inputs))[:16],
        input=inputs,
        expected=dict(example.labels().toDict()),
    )
    case.output = prediction_output(prediction)
    case.output_json = canonical_json(case.output)
    case.measurements.model_calls.extend(usage_calls(prediction, None, None))
    return case


def dspy_metric(metric: MetricFile | str | os.PathLike[str]) -> DspyMetric:
    """Adapt a metric file (or its path) to DSPy's metric call."""
    _dspy()
    return DspyMetric(metric if isinstance(metric, MetricFile) else MetricFile(metric))


def dspy_examples(dataset: Any, *, split: str | None = None) -> list[Any]:
    """A dataset's rows as dspy.Example objects: input fields as inputs, expected as labels."""
    dspy = _dspy()
    examples = []
    for row in load_dataset(dataset, split=split).rows:
        expected = row.expected or {}
        clash = sorted(set(row.input) & set(expected))
        if clash:
            raise ContractError(
                f"row {row.id!r}: {clash[0]!r} is both an input and an "
                "expected field; DSPy examples need distinct names"
            )
        examples.append(dspy.Example(**row.input, **expected).with_inputs(*row.input))
    return examples


def _example_inputs(example: Any) -> dict[str, Any]:
    try:
        return dict(example.inputs().toDict())
    except ValueError:
        raise ContractError(
            "the dspy.Example has no input fields marked: build it with "
            ".with_inputs('question', ...) (dspy_examples() does)"
        ) from None


def _record_usage(prediction: Any, price_in: float | None, price_out: float | None) -> None:
    context = current_case_or_none()
    if context is None:
        return
    for call in usage_calls(prediction, price_in, price_out):
        context.record_model_call(call)


def usage_calls(
    prediction: Any, price_in: float | None, price_out: float | None
) -> list[ModelCall]:
    """The program's model calls as DSPy's usage tracker counted them, priced as the system's."""
    get_usage = getattr(prediction, "get_lm_usage", None)
    usage = (get_usage() if get_usage is not None else None) or {}
    prices = _prices(price_in, price_out) if usage else None
    calls = []
    for model, figures in usage.items():
        input_tokens = int(figures.get("prompt_tokens") or 0)
        output_tokens = int(figures.get("completion_tokens") or 0)
        cost = (
            None
            if prices is None
            else (input_tokens * prices[0] + output_tokens * prices[1]) / 1_000_000
        )
        calls.append(
            ModelCall(
                role="system",
                model=str(model),
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                cost_usd=cost,
                latency_ms=0.0,
            )
        )
    return calls


def _prices(price_in: float | None, price_out: float | None) -> tuple[float, float] | None:
    if price_in is not None and price_out is not None:
        return float(price_in), float(price_out)
    try:
        settings = settings_for("system")
    except ModelError:
        return None
    if settings.price_in is None or settings.price_out is None:
        return None
    return settings.price_in, settings.price_out
