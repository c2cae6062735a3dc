"""One optimization from start to proof: split, search within the budget, prove the winner.

    spec = OptimizationSpec(system=bot, dataset="cases.jsonl", evaluators=[metric],
                            budget=Budget(metric_calls=200))
    result = run_optimization(spec=spec, store=store, ledger=ledger)

The same function serves the library, the command line and the workers; given the
id of an optimization already begun, it resumes from what the ledger kept.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

from oloproof_core._util.canonical import canonical_json, digest_text
from oloproof_core.datasets.rows import Dataset, Row
from oloproof_core.errors import OloproofError
from oloproof_core.optimize._artifact import Artifact
from oloproof_core.optimize._budget import Budget, BudgetUsed, Meter
from oloproof_core.optimize._candidates import Evaluations
from oloproof_core.optimize._ledger import CandidateRecord, Ledger
from oloproof_core.optimize._outcome import OptimizationResult
from oloproof_core.optimize._preflight import Prepared, prepare
from oloproof_core.optimize._prove import held_out_run, proof_summary
from oloproof_core.optimize._reflection import Reflector
from oloproof_core.optimize._search import CandidateRecorder, Search, best_candidate
from oloproof_core.optimize._shared_pool import CandidatePool, Shielding
from oloproof_core.optimize._spec import OptimizationSpec, Progress
from oloproof_core.optimize._splits import Splits
from oloproof_core.results.store import Store


def run_optimization(
    *,
    spec: OptimizationSpec,
    store: Store,
    ledger: Ledger,
    optimization_id: str | None = None,
    progress: Progress | None = None,
) -> OptimizationResult:
    """Search for a better candidate within the budget, then prove the winner on test.

    Everything is checked before a record is made or a model is called (a
    `ConfigError` says what is wrong). Once begun, the optimization ends in a final
    state: succeeded, or failed with what stopped it, recorded before the error is
    raised again.
    """
    notify = progress or (lambda event, details: None)
    resumed = optimization_id is not None
    try:
        prepared = prepare(spec)
    except Exception as exc:
        if optimization_id is not None:
            _fail(ledger, optimization_id, exc, None)
        raise
    if optimization_id is None:
        optimization_id = ledger.optimization_begin(config=dict(spec.config))
    splits = prepared.splits
    largest = max(len(splits.train), len(splits.val), len(splits.test))
    search: Search | None = None
    try:
        # One pool of system processes for every evaluation, the proof's included.
        with CandidatePool(cases=largest, shielding=Shielding.of(spec)) as pool:
            search = _search_for(spec, store, ledger, optimization_id, prepared, notify, pool)
            return _search_and_prove(spec, store, ledger, search, prepared, pool, notify)
    except Exception as exc:
        _fail(ledger, optimization_id, exc, search)
        raise
    except KeyboardInterrupt as exc:
        if not resumed:  # a worker's optimization is taken over by another worker
            _fail(ledger, optimization_id, exc, search)
        raise


def _fail(ledger: Ledger, optimization_id: str, exc: BaseException, search: Search | None) -> None:
    """Record the optimization as failed, with what stopped it."""
    if isinstance(exc, OloproofError):
        reason = str(exc)
    elif isinstance(exc, KeyboardInterrupt):
        reason = "interrupted"
    else:
        reason = f"{type(exc).__name__}: {exc}"
    outcome: dict[str, Any] = {"error": reason}
    if search is not None:
        outcome["budget_used"] = search.meter.used().to_dict()
        outcome["evaluations"] = _counts(search)
    try:
        ledger.optimization_conclude(optimization_id, status="failed", outcome=outcome)
    except Exception as unrecorded:  # the error raised stays the one that stopped it
        exc.add_note(f"recording optimization {optimization_id} as failed failed too: {unrecorded}")


def _search_and_prove(
    spec: OptimizationSpec,
    store: Store,
    ledger: Ledger,
    search: Search,
    prepared: Prepared,
    pool: CandidatePool,
    notify: Progress,
) -> OptimizationResult:
    optimization_id, settings = search.evaluations.optimization_id, search.settings
    engine, splits = prepared.engine, prepared.splits
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
        prepare_reflection_client()
        engine.search(search)  # the engine evaluates the seed on val first, and records it
    search.raise_if_halted()
    if not search.recorder.recorded():
        # Stopped before the seed was scored (a dollar or time limit): score it anyway,
        # outside the budget, since the proof on test needs it.
        search.recorder.record(search.artifact.seed_texts, parents=(), origin="seed", charge=False)
    return _prove(spec, store, ledger, search, prepared, notify, pool)


def prepare_reflection_client() -> None:
    """Import the model client and make the reflection role's, beside the seed's first
    evaluation (which runs in the system's processes): the first reflection, after it,
    then finds them ready instead of paying the client's import (about a second)."""

    from oloproof_core.models import prepare as prepare_clients

    def prepare_quietly() -> None:
        with contextlib.suppress(Exception):  # the first reflection says what is wrong
            prepare_clients(("reflection",))

    threading.Thread(target=prepare_quietly, name="oloproof-reflection-client", daemon=True).start()


def _search_for(
    spec: OptimizationSpec,
    store: Store,
    ledger: Ledger,
    optimization_id: str,
    prepared: Prepared,
    notify: Progress,
    pool: CandidatePool,
) -> Search:
    splits, artifact = prepared.splits, prepared.artifact
    meter = Meter(spec.budget, _resumed_usage(ledger, optimization_id))
    evaluations = _evaluations_for(
        spec, store, ledger, optimization_id, splits, artifact, prepared.objective, meter, pool
    )
    reflector = Reflector(ledger=ledger, optimization_id=optimization_id, meter=meter)

    def on_candidate(record: CandidateRecord) -> None:
        _progress(ledger, optimization_id, search, "running", prepared.engine.name, splits)
        notify("candidate", {"candidate": record.to_dict(), "budget_used": meter.used().to_dict()})

    recorder = CandidateRecorder(
        ledger=ledger,
        optimization_id=optimization_id,
        evaluations=evaluations,
        reflector=reflector,
        store=store,
        val_dataset=split_dataset(prepared.data, splits, "val"),
        confidence=spec.confidence,
        on_candidate=on_candidate,
        repeats=splits.repeats,
        judge_repeats=spec.judge_repeats,
    )
    search = Search(
        artifact=artifact,
        splits=splits,
        evaluators=list(spec.evaluators),
        evaluations=evaluations,
        reflector=reflector,
        meter=meter,
        recorder=recorder,
        settings=prepared.settings,
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
        judge_repeats=spec.judge_repeats,
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
            "system": {"name": search.artifact.name, "version": search.artifact.base_version},
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
    prepared: Prepared,
    notify: Progress,
    pool: CandidatePool,
) -> OptimizationResult:
    """The seed and the winner, once each on test; the winner's run is gated, the seed's
    run its baseline. When no candidate beat the seed, the seed is the winner: it runs
    once, and that run is gated with itself as the baseline."""
    optimization_id = search.evaluations.optimization_id
    engine, objective = prepared.engine.name, prepared.objective
    candidates = search.recorder.recorded()
    seed, winner = candidates[0], best_candidate(candidates)
    _progress(ledger, optimization_id, search, "proving", engine, search.splits)
    notify("proving", {"seed": seed.index, "winner": winner.index})
    test = split_dataset(prepared.data, search.splits, "test")
    common: dict[str, Any] = {
        "artifact": search.artifact,
        "test": test,
        "evaluators": list(spec.evaluators),
        "store": store,
        "optimization_id": optimization_id,
        "concurrency": spec.concurrency,
        "timeout": spec.timeout,
        "confidence": spec.confidence,
        "repeats": search.splits.repeats,
        "judge_repeats": spec.judge_repeats,
        "pool": pool,
    }
    if winner.index == seed.index:
        seed_test = held_out_run(candidate=seed, policy=prepared.policy, **common)
        winner_test = seed_test
    else:
        seed_test = held_out_run(candidate=seed, **common)
        winner_test = held_out_run(
            candidate=winner, policy=prepared.policy, baseline=seed_test, **common
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
