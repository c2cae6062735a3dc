"""The `dspy-gepa` engine: `dspy.GEPA` over a DSPy program's predictor instructions.

DSPy runs the program and calls our metric adapter (`DspyMetric`): every call is a
judged case (the verdict cache first, the program's model usage as its
measurements, sub-scores passed on as GEPA objective scores), charged to the
meter. Reflection is our `Reflector` (as DSPy's `instruction_proposer`), the
limits are checked by a stop callback between iterations (DSPy runs a whole
evaluation once it started it, so a limit can be overrun by one evaluation's
worth), and a callback records each candidate from the cases the metric judged.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from oloproof_core._canonical import canonical_json
from oloproof_core.case import CaseResult
from oloproof_core.dataset import Row
from oloproof_core.errors import ConfigError
from oloproof_core.evaluators import MetricFile
from oloproof_core.optimize._artifact import Artifact
from oloproof_core.optimize._budget import Budget
from oloproof_core.optimize._gepa import MeterStopper
from oloproof_core.optimize._search import Search
from oloproof_core.optimize._splits import Splits

NO_LIMIT_CALLS = 10**9


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


class RecordingCallback:
    def __init__(self, search: Search, judged: JudgedCases) -> None:
        self.search, self.judged = search, judged
        self.ours: dict[int, int] = {}

    def on_valset_evaluated(self, event: Mapping[str, Any]) -> None:
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
        return {
            "candidate_selection": str(settings.get("candidate_selection", "pareto")),
            "minibatch_size": int(settings.get("minibatch_size", min(3, len(splits.train)))),
            "use_merge": bool(settings.get("use_merge", False)),
            "num_threads": int(settings.get("num_threads", 1)),
        }

    def search(self, search: Search) -> None:
        import dspy

        from oloproof_core.dspy_adapter import DspyMetric

        metric_file = search.evaluators[0]
        if not isinstance(metric_file, MetricFile) or len(search.evaluators) != 1:
            raise ConfigError(
                "engine dspy-gepa judges with one metric file: evaluators: [metric.py]"
            )
        judged = JudgedCases([*search.splits.train, *search.splits.val])
        meter = search.meter

        def on_judged(case: CaseResult) -> None:
            meter.charge_cases([case])
            judged.keep(case)

        settings = search.settings
        optimizer = dspy.GEPA(
            metric=DspyMetric(metric_file, store=search.evaluations.store, on_judged=on_judged),
            max_metric_calls=search.meter.budget.metric_calls or NO_LIMIT_CALLS,
            reflection_minibatch_size=settings["minibatch_size"],
            candidate_selection_strategy=settings["candidate_selection"],
            instruction_proposer=search.reflector,
            use_merge=settings["use_merge"],
            num_threads=settings["num_threads"],
            seed=search.seed,
            gepa_kwargs={
                "stop_callbacks": [MeterStopper(meter)],
                "callbacks": [RecordingCallback(search, judged)],
            },
        )
        with dspy.context(track_usage=True):
            optimizer.compile(
                search.artifact.program,
                trainset=_examples(search.splits.train),
                valset=_examples(search.splits.val),
            )


DSPY_GEPA_ENGINE = DspyGepaEngine()
