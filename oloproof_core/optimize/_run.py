"""One optimization from start to proof: split, search within the budget, prove the winner.

    spec = OptimizationSpec(system=bot, dataset="cases.jsonl", evaluators=[metric],
                            budget=Budget(metric_calls=200))
    result = run_optimization(spec=spec, store=store, ledger=ledger)

The same function serves the library, the command line and the workers; given the
id of an optimization already begun, it resumes from what the ledger kept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from oloproof_core._canonical import canonical_json, digest_text
from oloproof_core.dataset import Dataset, Row, load_dataset
from oloproof_core.errors import ConfigError
from oloproof_core.evaluation import DatasetSource
from oloproof_core.evaluators import Evaluator
from oloproof_core.optimize._artifact import Artifact, artifact_from
from oloproof_core.optimize._budget import Budget, BudgetUsed, Meter
from oloproof_core.optimize._candidates import Evaluations
from oloproof_core.optimize._ledger import CandidateRecord, Ledger
from oloproof_core.optimize._prove import held_out_run, proof_summary
from oloproof_core.optimize._reflection import Reflector
from oloproof_core.optimize._registry import Engine, engine_named
from oloproof_core.optimize._search import CandidateRecorder, Search, best_candidate
from oloproof_core.optimize._shared_pool import CandidatePool
from oloproof_core.optimize._splits import Splits, split_rows
from oloproof_core.store import Store

Progress = Callable[[str, Mapping[str, Any]], None]
"""Called as progress(event, details): "started", "candidate", "proving", "finished"."""


@dataclass
class OptimizationSpec:
    system: Any
    dataset: DatasetSource
    evaluators: Sequence[Evaluator]
    budget: Budget
    engine: str = "auto"
    components: Mapping[str, str] | None = None
    splits: Mapping[str, float] | None = None
    objective: str | None = None
    policy: Any = None
    concurrency: int | None = None
    timeout: float | None = None
    confidence: float = 0.95
    seed: int = 0
    settings: Mapping[str, Any] = field(default_factory=dict)
    name: str | None = None
    version: str | None = None
    config: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class OptimizationResult:
    optimization_id: str
    engine: str
    settings: dict[str, Any]
    candidates: list[CandidateRecord]
    seed: CandidateRecord
    winner: CandidateRecord
    budget_used: dict[str, Any]
    splits: dict[str, Any]
    proof: dict[str, Any]
    evaluations: dict[str, int]

    @property
    def gate(self) -> Mapping[str, Any] | None:
        return self.proof.get("gate")

    def __str__(self) -> str:
        from oloproof_core.optimize._report import render_optimization

        return render_optimization(self)


def run_optimization(
    *,
    spec: OptimizationSpec,
    store: Store,
    ledger: Ledger,
    optimization_id: str | None = None,
    progress: Progress | None = None,
) -> OptimizationResult:
    """Search for a better candidate within the budget, then prove the winner on test."""
    notify = progress or (lambda event, details: None)
    data = load_dataset(spec.dataset)
    splits = split_rows(data.rows, fractions=spec.splits)
    artifact = artifact_from(
        spec.system, components=spec.components, name=spec.name, version=spec.version
    )
    objective = spec.objective or spec.evaluators[0].criterion
    engine = engine_named(spec.engine)
    settings = engine.configure(
        artifact=artifact, splits=splits, budget=spec.budget, settings=spec.settings
    )
    if optimization_id is None:
        optimization_id = ledger.optimization_begin(config=dict(spec.config))
    _check_budget_fits(spec.budget, splits)
    largest = max(len(splits.train), len(splits.val), len(splits.test))
    # One pool of system processes for every evaluation, the proof's included.
    with CandidatePool(cases=largest) as pool:
        search = _search_for(
            spec,
            store,
            ledger,
            optimization_id,
            data,
            splits,
            artifact,
            objective,
            settings,
            notify,
            pool,
        )
        return _search_and_prove(spec, store, ledger, search, data, engine, splits, pool, notify)


def _search_and_prove(
    spec: OptimizationSpec,
    store: Store,
    ledger: Ledger,
    search: Search,
    data: Dataset,
    engine: Engine,
    splits: Splits,
    pool: CandidatePool,
    notify: Progress,
) -> OptimizationResult:
    optimization_id, settings = search.evaluations.optimization_id, search.settings
    artifact, objective = search.artifact, search.evaluations.objective
    _progress(ledger, optimization_id, search, "running", engine.name, splits)
    notify(
        "started",
        {
            "optimization_id": optimization_id,
            "engine": engine.name,
            "settings": settings,
            "splits": splits.record()["counts"],
        },
    )
    if search.meter.reached() is None:
        engine.search(search)  # the engine evaluates the seed on val first, and records it
    if not search.recorder.recorded():
        # Stopped before the seed was scored (a dollar or time limit): score it anyway,
        # outside the budget, since the proof on test needs it.
        search.recorder.record(artifact.seed_texts, parents=(), origin="seed", charge=False)
    return _prove(spec, store, ledger, search, data, engine.name, objective, notify, pool)


def _search_for(
    spec: OptimizationSpec,
    store: Store,
    ledger: Ledger,
    optimization_id: str,
    data: Dataset,
    splits: Splits,
    artifact: Artifact,
    objective: str,
    settings: dict[str, Any],
    notify: Progress,
    pool: CandidatePool,
) -> Search:
    meter = Meter(spec.budget, _resumed_usage(ledger, optimization_id))
    evaluations = _evaluations_for(
        spec, store, ledger, optimization_id, splits, artifact, objective, meter, pool
    )
    reflector = Reflector(ledger=ledger, optimization_id=optimization_id, meter=meter)

    def on_candidate(record: CandidateRecord) -> None:
        _progress(ledger, optimization_id, search, "running", spec.engine, splits)
        notify("candidate", {"candidate": record.to_dict(), "budget_used": meter.used().to_dict()})

    recorder = CandidateRecorder(
        ledger=ledger,
        optimization_id=optimization_id,
        evaluations=evaluations,
        reflector=reflector,
        store=store,
        val_dataset=split_dataset(data, splits, "val"),
        confidence=spec.confidence,
        on_candidate=on_candidate,
    )
    search = Search(
        artifact=artifact,
        splits=splits,
        evaluators=list(spec.evaluators),
        evaluations=evaluations,
        reflector=reflector,
        meter=meter,
        recorder=recorder,
        settings=settings,
        seed=spec.seed,
    )
    return search


def _evaluations_for(
    spec: OptimizationSpec,
    store: Store,
    ledger: Ledger,
    optimization_id: str,
    splits: Splits,
    artifact: Artifact,
    objective: str,
    meter: Meter,
    pool: CandidatePool,
) -> Evaluations:
    return Evaluations(
        make_release=artifact.make_release,
        base_version=artifact.base_version,
        evaluators=spec.evaluators,
        objective=objective,
        store=store,
        ledger=ledger,
        optimization_id=optimization_id,
        meter=meter,
        open_rows={"train": splits.train, "val": splits.val},  # never test
        concurrency=spec.concurrency,
        timeout=spec.timeout,
        pool=pool,
    )


def _resumed_usage(ledger: Ledger, optimization_id: str) -> BudgetUsed:
    """What a resumed optimization had spent: its recorded time, and the cost of every
    evaluation and reflection recorded (replaying them costs nothing again)."""
    state = ledger.optimization_state(optimization_id)
    used = BudgetUsed(wall_time_s=float((state.get("budget_used") or {}).get("wall_time_s", 0)))
    meter = Meter(Budget(metric_calls=1), used)
    for record in ledger.evaluations(optimization_id):
        for call in record.data.get("model_calls") or []:
            meter.charge_call(call["role"], call.get("cost_usd"))
    for reflection in ledger.reflections(optimization_id):
        meter.charge_call("reflection", reflection.cost_usd)
    return meter.used()


def _check_budget_fits(budget: Budget, splits: Splits) -> None:
    if budget.metric_calls is not None and budget.metric_calls < len(splits.val):
        raise ConfigError(
            f"budget: {budget.metric_calls} metric calls cannot even evaluate the "
            f"seed on val ({len(splits.val)} cases); allow at least "
            f"{len(splits.val) * 3} to leave room for candidates"
        )


def split_dataset(data: Dataset, splits: Splits, split: str) -> Dataset:
    rows: tuple[Row, ...] = splits.rows(split)
    digest = digest_text(canonical_json([data.digest, split, [row.id for row in rows]]))
    return Dataset(
        source=f"{data.source} ({split})",
        rows=list(rows),
        digest=digest,
        split=split,
        splits={split: len(rows)},
    )


def _progress(
    ledger: Ledger, optimization_id: str, search: Search, status: str, engine: str, splits: Splits
) -> None:
    ledger.optimization_progress(
        optimization_id,
        status=status,
        progress={
            "engine": engine,
            "settings": search.settings,
            "splits": splits.record(),
            "budget_used": search.meter.used().to_dict(),
            "candidates": len(search.recorder.recorded()),
            "evaluations": _counts(search),
        },
    )


def _counts(search: Search) -> dict[str, int]:
    counts = search.evaluations.counts
    return {"run": counts.run, "served": counts.served, "replayed": counts.replayed}


def _prove(
    spec: OptimizationSpec,
    store: Store,
    ledger: Ledger,
    search: Search,
    data: Dataset,
    engine: str,
    objective: str,
    notify: Progress,
    pool: CandidatePool,
) -> OptimizationResult:
    optimization_id = search.evaluations.optimization_id
    candidates = search.recorder.recorded()
    seed, winner = candidates[0], best_candidate(candidates)
    _progress(ledger, optimization_id, search, "proving", engine, search.splits)
    notify("proving", {"seed": seed.index, "winner": winner.index})
    test = split_dataset(data, search.splits, "test")
    common: dict[str, Any] = {
        "artifact": search.artifact,
        "test": test,
        "evaluators": list(spec.evaluators),
        "store": store,
        "optimization_id": optimization_id,
        "concurrency": spec.concurrency,
        "timeout": spec.timeout,
        "confidence": spec.confidence,
        "pool": pool,
    }
    seed_test = held_out_run(candidate=seed, **common)
    winner_test = (
        seed_test
        if winner.index == seed.index
        else held_out_run(candidate=winner, policy=spec.policy, baseline=seed_test, **common)
    )
    proof = proof_summary(
        seed=seed,
        winner=winner,
        seed_test=seed_test,
        winner_test=winner_test,
        objective=objective,
        confidence=spec.confidence,
    )
    return _concluded(ledger, search, engine, seed, winner, proof, notify)


def _concluded(
    ledger: Ledger,
    search: Search,
    engine: str,
    seed: CandidateRecord,
    winner: CandidateRecord,
    proof: dict[str, Any],
    notify: Progress,
) -> OptimizationResult:
    optimization_id = search.evaluations.optimization_id
    used = search.meter.used()
    used.stopped_by = search.meter.reached()
    result = OptimizationResult(
        optimization_id=optimization_id,
        engine=engine,
        settings=search.settings,
        candidates=search.recorder.recorded(),
        seed=seed,
        winner=winner,
        budget_used=used.to_dict(),
        splits=search.splits.record(),
        proof=proof,
        evaluations=_counts(search),
    )
    ledger.optimization_conclude(
        optimization_id,
        status="succeeded",
        outcome={
            "winner": winner.index,
            "proof": proof,
            "budget_used": result.budget_used,
            "evaluations": result.evaluations,
        },
    )
    notify("finished", {"winner": winner.to_dict(), "proof": proof})
    return result
