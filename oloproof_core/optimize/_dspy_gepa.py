"""The `dspy-gepa` engine: `dspy.GEPA` over a DSPy program's predictor instructions.

DSPy runs the program and calls our metric adapter (`DspyMetric`): every call is a
judged case (the verdict cache first, the program's model usage as its
measurements, sub-scores passed on as GEPA objective scores). Reflection is our
`Reflector` (as DSPy's `instruction_proposer`), and a callback records each
candidate from the cases the metric judged.

The metric-call limit is never passed. DSPy runs an evaluation it has started to its
end, so the search starts an iteration only while its largest possible cost still
fits (`iteration_calls`: the parent's minibatch, the feedback on it, the new
candidate's minibatch, and a full val evaluation; or a merge's), and each metric call
takes its place from the meter before it is judged: one that does not fit is not
judged. Dollars and time are checked between iterations, so those can be overrun by
the iteration under way. A metric that breaks its contract halts the search: the
rest of DSPy's evaluation under way is not judged, and the optimization fails with
the metric's message.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from oloproof_core._util.canonical import canonical_json
from oloproof_core.cases.case import CaseResult
from oloproof_core.datasets.rows import Row
from oloproof_core.errors import ConfigError
from oloproof_core.judging.evaluators import MetricFile
from oloproof_core.optimize._artifact import Artifact
from oloproof_core.optimize._budget import Budget, BudgetExhausted
from oloproof_core.optimize._contract import contract_failure
from oloproof_core.optimize._packages import DSPY_INSTALL, require_package
from oloproof_core.optimize._reflection import require_reflection_model
from oloproof_core.optimize._search import Search
from oloproof_core.optimize._splits import Splits

NO_LIMIT_CALLS = 10**9
MERGE_SUBSAMPLE = 5
"""The val cases GEPA scores a merged candidate on before its full val evaluation."""


class JudgedCases:
    """The latest judged case per row, as the metric saw it (the recorder reads them)."""

    def __init__(self, rows: list[Row]) -> None:
        self._rows = {canonical_json(row.input): row for row in rows}
        self._latest: dict[str, CaseResult] = {}
        self._lock = threading.Lock()

    def keep(self, case: CaseResult) -> None:
        row = self._rows.get(canonical_json(case.input))
        if row is None:
            return
        judged = CaseResult.from_row(row)
        judged.output, judged.output_json = case.output, case.output_json
        judged.measurements, judged.verdicts = case.measurements, case.verdicts
        with self._lock:
            self._latest[row.id] = judged

    def latest(self, row: Row) -> CaseResult | None:
        with self._lock:
            return self._latest.get(row.id)


class MeteredMetric:
    """The metric as DSPy calls it: each call takes its metric call from the meter
    first, and none is judged once the search is halted."""

    def __init__(self, metric: Any, search: Search) -> None:
        self.metric, self.search = metric, search
        self.__name__ = metric.__name__
        self.refused = 0
        """Calls refused by the meter: DSPy scored those cases as failures."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.search.raise_if_halted()
        try:
            self.search.meter.take(1)
        except BudgetExhausted:
            self.refused += 1
            raise
        return self.metric(*args, **kwargs)


class IterationStopper:
    """DSPy GEPA's stop condition: the search is halted, a limit is reached, or the
    next iteration's largest possible cost would not fit in the metric calls left."""

    def __init__(self, search: Search, iteration_calls: int) -> None:
        self.search, self.iteration_calls = search, iteration_calls

    def __call__(self, gepa_state: Any) -> bool:
        if self.search.failure is not None:
            return True
        try:
            self.search.meter.admit(self.iteration_calls)
        except BudgetExhausted:
            return True
        return False


def iteration_calls(settings: Mapping[str, Any], val_cases: int) -> int:
    """The most metric calls one GEPA iteration of DSPy's can make.

    A reflective iteration evaluates the parent on a minibatch (with traces), asks the
    metric for feedback on each of those cases for the one predictor it updates
    (round robin), evaluates the new candidate on the minibatch and, if it does better,
    on all of val. A merge evaluates the merged candidate on up to 5 val cases, then on
    all of val.
    """
    minibatch = int(settings["minibatch_size"])
    reflective = 3 * minibatch
    merge = min(MERGE_SUBSAMPLE, val_cases) if settings.get("use_merge") else 0
    return max(reflective, merge) + val_cases


class RecordingCallback:
    """Records each candidate DSPy's GEPA scores on val, from the cases the metric judged;
    none once the meter has refused a metric call (that evaluation is incomplete)."""

    def __init__(self, search: Search, judged: JudgedCases, metric: MeteredMetric) -> None:
        self.search, self.judged, self.metric = search, judged, metric
        self.ours: dict[int, int] = {}

    def on_valset_evaluated(self, event: Mapping[str, Any]) -> None:
        try:
            self._record(event)
        except Exception as exc:  # DSPy's GEPA would log it and go on
            self.search.halt(exc)

    def _record(self, event: Mapping[str, Any]) -> None:
        if self.metric.refused:
            return
        rows = self.search.splits.val
        cases = [self.judged.latest(rows[int(index)]) for index in event["scores_by_val_id"]]
        parents = [self.ours[i] for i in event.get("parent_ids") or () if i in self.ours]
        origin = "seed" if not parents else ("merge" if len(parents) > 1 else "reflection")
        record = self.search.recorder.record(
            event["candidate"],
            parents=parents,
            origin=origin,
            cases=[case for case in cases if case is not None],
        )
        self.ours[int(event["candidate_idx"])] = record.index


def _examples(rows: tuple[Row, ...]) -> list[Any]:
    import dspy

    return [
        dspy.Example(**row.input, **(row.expected or {})).with_inputs(*row.input) for row in rows
    ]


class DspyGepaEngine:
    name = "dspy-gepa"
    description = "dspy.GEPA over a DSPy program's predictor instructions"

    def configure(
        self, *, artifact: Artifact, splits: Splits, budget: Budget, settings: Mapping[str, Any]
    ) -> dict[str, Any]:
        if artifact.kind != "dspy":
            raise ConfigError(
                "engine dspy-gepa optimizes DSPy programs: point `system:` at a "
                "dspy.Module, or use engine gepa (or auto) for components"
            )
        require_package("dspy", DSPY_INSTALL, engine=self.name)
        require_package("gepa", DSPY_INSTALL, engine=self.name)
        require_reflection_model()
        return {
            "candidate_selection": str(settings.get("candidate_selection", "pareto")),
            "minibatch_size": int(settings.get("minibatch_size", min(3, len(splits.train)))),
            "use_merge": bool(settings.get("use_merge", False)),
            "num_threads": int(settings.get("num_threads", 1)),
        }

    def search(self, search: Search) -> None:
        import dspy

        from oloproof_core.optimize._dspy_adapter import DspyMetric

        metric_file = _one_metric_file(search.evaluators)
        judged = JudgedCases([*search.splits.train, *search.splits.val])
        meter = search.meter

        def on_judged(case: CaseResult) -> None:
            meter.charge_costs([case])
            judged.keep(case)
            broken = contract_failure([case])
            if broken is not None:
                search.halt(broken)
                raise broken

        settings = search.settings
        metered = MeteredMetric(
            DspyMetric(metric_file, store=search.evaluations.store, on_judged=on_judged), search
        )
        stopper = IterationStopper(search, iteration_calls(settings, len(search.splits.val)))
        optimizer = dspy.GEPA(
            metric=metered,
            max_metric_calls=search.meter.budget.metric_calls or NO_LIMIT_CALLS,
            reflection_minibatch_size=settings["minibatch_size"],
            candidate_selection_strategy=settings["candidate_selection"],
            instruction_proposer=search.reflector,
            use_merge=settings["use_merge"],
            num_threads=settings["num_threads"],
            seed=search.seed,
            gepa_kwargs={
                "stop_callbacks": [stopper],
                "callbacks": [RecordingCallback(search, judged, metered)],
            },
        )
        try:
            with dspy.context(track_usage=True):
                optimizer.compile(
                    search.artifact.program,
                    trainset=_examples(search.splits.train),
                    valset=_examples(search.splits.val),
                )
        except BudgetExhausted:
            pass
        except Exception:
            search.raise_if_halted()  # what halted the search, not what DSPy made of it
            raise
        search.raise_if_halted()


DSPY_GEPA_ENGINE = DspyGepaEngine()


def _one_metric_file(evaluators: Any) -> MetricFile:
    """The one metric file this engine judges with."""
    if len(evaluators) != 1 or not isinstance(evaluators[0], MetricFile):
        raise ConfigError("engine dspy-gepa judges with one metric file: evaluators: [metric.py]")
    return evaluators[0]
