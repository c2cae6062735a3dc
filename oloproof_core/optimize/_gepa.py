"""The `gepa` engine: the `gepa` package's search, evaluating through oloproof's engine.

Our adapter implements GEPA's adapter protocol (`evaluate`, `make_reflective_dataset`):
GEPA's data instances are the dataset's rows, a candidate's evaluation is
`Evaluations.evaluate` (the run machinery, the verdict cache, the ledger), its
score is the objective's verdict and its objective scores are every criterion and
sub-score. Reflection is our `Reflector`, the stop condition our meter, and a
callback records each candidate once GEPA has scored it on val. Every evaluation
asks the meter first, so the metric calls never pass their limit: the one that
would is refused, and the search ends there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import suppress
from typing import Any

from oloproof_core.datasets.rows import Row
from oloproof_core.optimize._artifact import Artifact
from oloproof_core.optimize._budget import Budget, BudgetExhausted
from oloproof_core.optimize._candidates import Evaluations
from oloproof_core.optimize._packages import GEPA_INSTALL, require_package
from oloproof_core.optimize._reflection import require_reflection_model
from oloproof_core.optimize._search import Search
from oloproof_core.optimize._splits import Splits

SETTINGS = ("candidate_selection", "minibatch_size", "use_merge", "module_selector")


class OloproofAdapter:
    """GEPA's adapter protocol over `Evaluations`."""

    propose_new_texts = None

    def __init__(self, evaluations: Evaluations) -> None:
        self.evaluations = evaluations

    def evaluate(
        self, batch: list[Row], candidate: dict[str, str], capture_traces: bool = False
    ) -> Any:
        from gepa import EvaluationBatch

        cases = self.evaluations.evaluate(candidate, batch)
        judge = self.evaluations
        traces = None
        if capture_traces:
            traces = [
                {
                    "input": case.input,
                    "output": case.output,
                    "score": judge.score(case),
                    "feedback": judge.feedback(case),
                }
                for case in cases
            ]
        return EvaluationBatch(
            outputs=[case.output for case in cases],
            scores=[judge.score(case) for case in cases],
            trajectories=traces,
            objective_scores=[judge.objectives(case) for case in cases],
        )

    def make_reflective_dataset(
        self, candidate: dict[str, str], eval_batch: Any, components_to_update: list[str]
    ) -> dict[str, list[dict[str, Any]]]:
        records = [
            {
                "Inputs": trace["input"],
                "Generated Outputs": trace["output"],
                "Feedback": trace["feedback"],
            }
            for trace in eval_batch.trajectories or []
        ]
        return dict.fromkeys(components_to_update, records)


class RecordingCallback:
    """Records every candidate GEPA scores on val, with its parents in our numbering.

    GEPA logs an exception raised in a callback and goes on; one raised here (the
    ledger's, or the progress function's) halts the search instead, and the
    optimization fails with it.
    """

    def __init__(self, search: Search) -> None:
        self.search, self.recorder = search, search.recorder
        self.ours: dict[int, int] = {}

    def on_valset_evaluated(self, event: Mapping[str, Any]) -> None:
        try:
            self._record(event)
        except Exception as exc:
            self.search.halt(exc)

    def _record(self, event: Mapping[str, Any]) -> None:
        texts = event["candidate"]
        parents = [self.ours[idx] for idx in event.get("parent_ids") or () if idx in self.ours]
        origin = "seed" if not parents else ("merge" if len(parents) > 1 else "reflection")
        cases = self.recorder.evaluations.known(texts, self.recorder.val_dataset.rows)
        record = self.recorder.record(texts, parents=parents, origin=origin, cases=cases)
        self.ours[int(event["candidate_idx"])] = record.index


class SearchStopper:
    """GEPA's stop condition: true once any limit is reached or the search is halted."""

    def __init__(self, search: Search) -> None:
        self.search, self.meter = search, search.meter

    def __call__(self, gepa_state: Any) -> bool:
        return self.search.failure is not None or self.meter.reached() is not None


class QuietLogger:
    def __init__(self, notes: list[str]) -> None:
        self.notes = notes

    def log(self, message: str) -> None:
        self.notes.append(str(message))


class GepaEngine:
    name = "gepa"
    description = "the gepa package's reflective Pareto search, candidates run by oloproof"

    def configure(
        self, *, artifact: Artifact, splits: Splits, budget: Budget, settings: Mapping[str, Any]
    ) -> dict[str, Any]:
        require_package("gepa", GEPA_INSTALL, engine=self.name)
        require_reflection_model()
        return {
            "candidate_selection": str(settings.get("candidate_selection", "pareto")),
            "minibatch_size": int(settings.get("minibatch_size", min(3, len(splits.train)))),
            "use_merge": bool(settings.get("use_merge", False)),
            "module_selector": str(settings.get("module_selector", "round_robin")),
        }

    def search(self, search: Search) -> None:
        import gepa

        settings = search.settings
        with suppress(BudgetExhausted):  # the meter ended the search
            gepa.optimize(
                seed_candidate=dict(search.artifact.seed_texts),
                trainset=list(search.splits.train),
                valset=list(search.splits.val),
                adapter=OloproofAdapter(search.evaluations),  # type: ignore[arg-type]
                custom_candidate_proposer=search.reflector,
                candidate_selection_strategy=settings["candidate_selection"],
                reflection_minibatch_size=settings["minibatch_size"],
                module_selector=settings["module_selector"],
                use_merge=settings["use_merge"],
                stop_callbacks=[SearchStopper(search)],
                callbacks=[RecordingCallback(search)],  # type: ignore[list-item]
                logger=QuietLogger(search.notes),
                seed=search.seed,
                raise_on_exception=True,
                display_progress_bar=False,
            )
        search.raise_if_halted()


GEPA_ENGINE = GepaEngine()


def rows_of(rows: Sequence[Row]) -> list[Row]:
    return list(rows)
