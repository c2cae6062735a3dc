"""The winner, proven: the seed and the winner run once on test, compared and gated.

Test cases are run only here, after the search has ended, and only for these two
candidates. The comparison is paired by case id; the policy decides the winner's
test run with the seed's as its baseline, so its gate goes to the approvals queue
like any other. When no candidate beat the seed, the seed is the winner: it runs on
test once, and that run is gated, with itself as the baseline. Val and test figures
come side by side, with the optimism gap (val − test): how much of the val score was
selection on val.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from oloproof_core.datasets.rows import Dataset
from oloproof_core.evaluation.conclusion import conclude_run
from oloproof_core.evaluation.plan import plan_run
from oloproof_core.evaluation.run import process_rows
from oloproof_core.judging.evaluators import Evaluator
from oloproof_core.optimize._artifact import Artifact
from oloproof_core.optimize._ledger import CandidateRecord
from oloproof_core.optimize._shared_pool import CandidatePool
from oloproof_core.results.result import Result
from oloproof_core.results.store import Store

if TYPE_CHECKING:
    from oloproof_core.gates import Gate, Policy


def held_out_run(
    *,
    artifact: Artifact,
    candidate: CandidateRecord,
    test: Dataset,
    evaluators: list[Evaluator],
    store: Store,
    optimization_id: str,
    policy: Any = None,
    baseline: Result | None = None,
    concurrency: int | None = None,
    timeout: float | None = None,
    confidence: float = 0.95,
    repeats: int = 1,
    judge_repeats: int = 1,
    pool: CandidatePool | None = None,
) -> Result:
    """One candidate on the test split (each case `repeats` times, each model judge asked
    `judge_repeats` times), recorded as its release's run (in `pool`'s processes if
    given); a `policy` without `baseline`: its own."""
    own_baseline = policy is not None and baseline is None
    started_at, started = datetime.now(UTC), time.perf_counter()
    plan = plan_run(
        system=artifact.make_release(candidate.texts, candidate.version),
        evaluators=evaluators,
        policy=policy,
        concurrency=concurrency,
        timeout=timeout,
        confidence=confidence,
        repeats=repeats,
        judge_repeats=judge_repeats,
    )
    plan = plan if pool is None else pool.lend(plan)
    cases = process_rows(plan, test.rows, store)
    result = conclude_run(
        replace(plan, policy=None) if own_baseline else plan,
        cases,
        test,
        store,
        started_at=started_at,
        duration_s=time.perf_counter() - started,
        baseline=baseline,
    )
    if own_baseline:
        result.provenance["policy"] = plan.policy.describe()
        result.gate = gated_against_itself(plan.policy, result, store)
    where = {"id": optimization_id, "split": "test", "candidate": candidate.index}
    result.provenance["optimization"] = where
    result.run_id = store.record_run(result)
    return result


def gated_against_itself(policy: Policy, result: Result, store: Store) -> Gate:
    """The gate of the seed's test run when the seed is the winner.

    The winner's gate compares it with the seed; here they are one run, so the
    difference is 0 on every case, exactly. A paired interval built for two samples
    would still straddle a margin on a few cases, so the no_regression rules are decided
    for what they are: passed, saying why. Every other rule is decided as for any run.
    """
    from oloproof_core.gates import Gate

    gate = policy.decide(result, baseline=result, store=store)
    rules = tuple(
        replace(
            rule,
            outcome="pass",
            reason=(
                "The winner is the seed: its test run is its own baseline, so candidate − "
                "baseline is 0 on every case and nothing regressed."
            ),
            summary="the winner is the seed: difference 0 on every case",
            figures={**rule.figures, "difference": 0.0, "lower": 0.0, "upper": 0.0},
            more_cases=None,
        )
        if rule.kind == "no_regression"
        else rule
        for rule in gate.rules
    )
    return Gate.from_rules(
        rules,
        confidence=gate.confidence,
        policy=gate.policy,
        baseline=gate.baseline,
        caveat=gate.caveat,
    )


def proof_summary(
    *,
    seed: CandidateRecord,
    winner: CandidateRecord,
    seed_test: Result,
    winner_test: Result,
    objective: str,
    confidence: float,
) -> dict[str, Any]:
    """Val and test side by side, the optimism gap, the paired comparison and the gate."""

    def figures(record: CandidateRecord, result: Result) -> dict[str, Any]:
        test = result.metric(objective)
        val = record.val.get("estimate")
        return {
            "candidate": record.index,
            "version": record.version,
            "run_id": result.run_id,
            "val": dict(record.val),
            "test": {
                "estimate": test.estimate,
                "lower": test.interval.lower,
                "upper": test.interval.upper,
                "n": test.n_observed,
                "n_missing": test.n_missing,
            },
            "optimism_gap": None if val is None or test.estimate is None else val - test.estimate,
        }

    summary: dict[str, Any] = {
        "objective": objective,
        "seed": figures(seed, seed_test),
        "winner": figures(winner, winner_test),
        "comparison": None,
        "gate": None,
    }
    if winner.index != seed.index:
        # Here, not at the top: the comparison's and the gates' statistics (numpy's import
        # among them, about 0.1 s) are needed after the search, not before its first case.
        from oloproof_core.results.compare import compare_runs

        comparison = compare_runs(seed_test, winner_test, confidence=confidence)
        summary["comparison"] = _plain(comparison.to_dict())
    if winner_test.gate is not None:
        summary["gate"] = _plain(winner_test.gate.to_dict())
    return summary


def _plain(data: Mapping[str, Any]) -> dict[str, Any]:
    import json

    return dict(json.loads(json.dumps(data, default=str)))
