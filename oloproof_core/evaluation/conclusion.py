"""Concluding a run: its metrics, its provenance and its gate, from its judged cases."""

from __future__ import annotations

import platform
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from oloproof_core._util.version import __version__
from oloproof_core.cases.case import CaseResult
from oloproof_core.cases.usage import usage_to_dict
from oloproof_core.datasets.rows import Dataset
from oloproof_core.results.result import Result
from oloproof_core.results.store import RunOpening, Store

if TYPE_CHECKING:
    from oloproof_core.evaluation.plan import RunPlan
    from oloproof_core.results.estimate import MetricEstimate


def conclude_run(
    plan: RunPlan,
    cases: Sequence[CaseResult],
    dataset: Dataset,
    store: Store,
    *,
    started_at: datetime,
    duration_s: float,
    baseline: Result | None = None,
) -> Result:
    """Aggregate the judged cases into metrics, record provenance and decide the gate.

    `cases` may be a run's value columns (`CaseColumns`): a worker concludes a large run
    from those, with the same figures, never holding its cases whole.
    """
    metrics = _metrics(plan, cases)
    provenance = {
        **provenance_head(plan, dataset, len(cases)),
        "library_version": __version__,
        "python": platform.python_version(),
        "started_at": started_at.isoformat(),
        "finished_at": datetime.now(UTC).isoformat(),
        "duration_s": round(duration_s, 6),
        "concurrency": plan.concurrency,
        "timeout_s": plan.timeout,
        "execution": dict(plan.execution) or {"isolation": plan.isolation},
        "confidence": plan.confidence,
        "judging": {name: tally.to_dict() for name, tally in plan.tallies.items()},
        "evaluator_timeout_s": plan.verdict_limit.seconds,
    }
    if plan.judging_execution:
        provenance["evaluator_execution"] = dict(plan.judging_execution)
    _note_repeats(plan, cases, provenance)
    result = Result(metrics=metrics, cases=cases, provenance=provenance)
    provenance["model_usage"] = _model_usage(result, plan.execution, plan.judging_execution)
    from oloproof_core.results.measured_text import measured_dicts

    # Kept with the run, as its model usage is, for the pages that read recorded runs.
    if measured := measured_dicts(result):
        provenance["measured"] = measured
    if plan.policy is not None:
        result.gate = plan.policy.decide(result, baseline=baseline, store=store)
    return result


def _metrics(plan: RunPlan, cases: Sequence[CaseResult]) -> list[MetricEstimate]:
    # Imported here: the statistics (scipy) load while the system's processes start.
    from oloproof_core.evaluation.aggregate import aggregate

    if plan.tries is None:
        return aggregate(cases, plan.evaluators, plan.confidence)
    # `repeats: auto`: some cases ran more times than others.
    from oloproof_core.evaluation.case_weighted import case_weighted_metrics

    return case_weighted_metrics(cases, plan.evaluators, plan.confidence)


def _note_repeats(plan: RunPlan, cases: Sequence[CaseResult], provenance: dict[str, Any]) -> None:
    """A repeated run's pass@k, pass^k and flaky cases (`evaluation/repeat_figures.py`);
    with judge repeats, the variance split of each repeated judge (`judge_variance.py`)."""
    if plan.repeats > 1:
        from oloproof_core.evaluation.repeat_figures import repeat_figures

        auto = None
        if plan.tries is not None:
            from oloproof_core.evaluation.auto_repeats import allocation_figures

            auto = allocation_figures(plan.tries, plan.evidence_runs)
        provenance["repeats"] = repeat_figures(
            cases, plan.evaluators, plan.repeats, plan.confidence, auto
        )
    if plan.judge_repeats > 1:
        from oloproof_core.evaluation.judge_variance import judge_repeat_figures

        provenance["judge_repeats"] = judge_repeat_figures(
            plan.judge_asked, plan.judge_repeats, plan.repeats
        )


def provenance_head(plan: RunPlan, dataset: Dataset, n_cases: int) -> dict[str, Any]:
    """What the provenance says of the release, the dataset, the evaluators and the policy."""
    release = plan.release
    return {
        "system": {
            "name": release.name,
            "version": release.version,
            "import_path": release.import_path,
            "is_async": release.is_async,
        },
        "dataset": {
            "source": dataset.source,
            "digest": dataset.digest,
            "n_cases": n_cases,
            "split": dataset.split,
            # Runs of one file at different repeat counts are the same cases.
            **(
                {"unrepeated_digest": unrepeated}
                if (unrepeated := dataset.unrepeated_digest)
                else {}
            ),
        },
        "evaluators": [evaluator.describe() for evaluator in plan.evaluators],
        "policy": None if plan.policy is None else plan.policy.describe(),
    }


def run_opening(plan: RunPlan, data: Dataset, started_at: datetime) -> RunOpening:
    head = provenance_head(plan, data, len(data.rows))
    return RunOpening(
        system=head["system"],
        dataset={**head["dataset"], "splits": dict(data.splits)},
        evaluators=head["evaluators"],
        policy=head["policy"],
        confidence=plan.confidence,
        started_at=started_at.isoformat(),
    )


def _model_usage(result: Result, *executions: dict[str, Any]) -> dict[str, Any]:
    """The run's model usage by role; calls made for no case (by the system's processes or
    the evaluators') are listed apart, not lost."""
    usage = usage_to_dict(result.usage())
    for execution in executions:
        for role, figures in (execution.get("unattributed_model_calls") or {}).items():
            usage[f"{role} (not attributed to a case)"] = figures
    return usage
