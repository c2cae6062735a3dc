"""Sequential gates on the workers: a run that adds cases in batches until its gate decides.

A submitted run whose policy is sequential (`sequential:` in the policy file) runs
its first batch of cases in the order of their ids' SHA-256 digests (the engine's
`sequential_order`, fixed by content) and decides the gate with the anytime-valid
intervals tuned to the whole dataset (`decide_sequential`). When that gate is
inconclusive, "run more cases" (`runs.services.run_continue`) opens the same run
again: the workers add batch after batch to the same evidence, deciding after each,
until the gate decides or the dataset's cases run out. However often it looks, a rule
whose truth sits at its threshold passes at most 2.5 % of the time.

The state lives in the run's `provenance["sequential"]`: `horizon` (cases in the
dataset), `batch`, `looks` so far, `n_run` (cases decided on), `repeats` when each
case runs more than once, and `until_decided` while a continuation is under way. A
chunk of a sequential run covers ranks in the sequential order rather than dataset
positions; its cases are recorded at those ranks. With repeats the order keeps a case's
repeats together, the state counts cases, and the chunks and totals count rows: a case's
repeats are `repeats` rows, all in one batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import oloproof_core as engine
from oloproof_core.gates import more_cases_may_settle
from runs.errors import ConflictError, InvalidRequestError
from runs.models import DatasetCase, Run
from runs.store import DjangoStore

ORDER = "sha256(case id)"


def sequential_batch(plan: engine.RunPlan) -> int | None:
    """Cases per look when the run's policy is sequential; None for a fixed-size gate."""
    if plan.policy is None or plan.policy.spec.batch is None:
        return None
    return int(plan.policy.spec.batch)


def sequential_start(*, horizon: int, batch: int, repeats: int = 1) -> dict[str, Any]:
    """The provenance of a sequential run as planned: nothing decided, one batch to run;
    `horizon` and `batch` in cases, each run `repeats` times."""
    state = {"horizon": horizon, "batch": batch, "looks": 0, "n_run": 0, "order": ORDER}
    return state if repeats == 1 else {**state, "repeats": repeats}


def sequential_repeats(state: dict[str, Any]) -> int:
    """How many rows each case of a sequential run is: its repeats."""
    return int(state.get("repeats") or 1)


def sequential_state(run: Run) -> dict[str, Any] | None:
    state = (run.provenance or {}).get("sequential")
    return dict(state) if isinstance(state, dict) and "batch" in state else None


def _dataset_id(run: Run) -> int:
    if run.dataset_id is None:
        # Unreachable: planning records the dataset before a sequential run has cases.
        raise RuntimeError(f"sequential run {run.pk} has no dataset")
    return run.dataset_id


def _case_ids(run: Run) -> list[str]:
    cases = DatasetCase.objects.filter(dataset_id=_dataset_id(run))
    return list(cases.values_list("case_id", flat=True))


def _rows(run: Run) -> list[engine.Row]:
    """The dataset's rows as the sequential order reads them: ids, and each repeat's index
    when the run repeats its cases (so that a case's repeats stay together)."""
    rows = [engine.Row(id=case_id, input={}) for case_id in _case_ids(run)]
    state = sequential_state(run)
    repeated = state is not None and sequential_repeats(state) > 1
    return engine.with_repeat_index(rows) if repeated else rows


def sequential_rows(*, run: Run, first: int, size: int) -> list[dict[str, Any]]:
    """The records of the cases at ranks [first, first + size) of the sequential order."""
    ordered = engine.sequential_order(_rows(run))
    wanted = [row.id for row in ordered[first : first + size]]
    rank = {case_id: index for index, case_id in enumerate(wanted)}
    records = DatasetCase.objects.filter(dataset_id=_dataset_id(run), case_id__in=wanted)
    return sorted(
        (
            {
                "id": record.case_id,
                "input": record.input,
                **{
                    key: getattr(record, key)
                    for key in ("expected", "split", "cluster")
                    if getattr(record, key) is not None
                },
            }
            for record in records
        ),
        key=lambda item: rank[item["id"]],
    )


def sequential_decide(
    *,
    run: Run,
    plan: engine.RunPlan,
    cases: Sequence[engine.CaseResult],
    dataset: engine.Dataset,
    state: dict[str, Any],
    timing: dict[str, Any],
    baseline: engine.Result | None,
) -> engine.Result:
    """The gate over every case run so far, read with the anytime-valid intervals."""
    if plan.policy is not None and not plan.policy.sequential:
        # The policy file lost its `sequential:` since planning: the run is still one.
        plan.policy = plan.policy.as_sequential(int(state["batch"]))
    horizon = engine.Dataset(
        source=dataset.source,
        rows=_rows(run),
        digest=dataset.digest,
        split=dataset.split,
        unrepeated_digest=dataset.unrepeated_digest,
    )
    result = engine.decide_sequential(
        plan,
        cases,
        horizon,
        DjangoStore(project=run.project.slug),
        started_at=timing["started_at"],
        duration_s=timing["duration_s"],
        baseline=baseline,
        looks=int(state.get("looks") or 0) + 1,
    )
    result.provenance["sequential"]["batch"] = int(state["batch"])
    if sequential_repeats(state) > 1:
        result.provenance["sequential"]["repeats"] = sequential_repeats(state)
    return result


def sequential_next(*, result: engine.Result, state: dict[str, Any]) -> tuple[int, int] | None:
    """(rows run, new total of rows) when a continued run's gate is still inconclusive and
    cases remain; None when the run is to be concluded as it stands."""
    done, repeats = len(result.cases), sequential_repeats(state)
    horizon = int(result.provenance["sequential"]["horizon"]) * repeats
    undecided = result.gate is not None and result.gate.more_cases_may_settle
    if not (state.get("until_decided") and undecided and done < horizon):
        return None
    return done, min(horizon, done + int(state["batch"]) * repeats)


def sequential_continuation(*, run: Run) -> tuple[dict[str, Any], int]:
    """The state of a run that may run more cases, and its next total of rows; else why not."""
    if run.status != Run.Status.SUCCEEDED:
        if run.status == Run.Status.FAILED:
            raise InvalidRequestError(f"run {run.pk} failed; submit it again rather")
        raise ConflictError(f"run {run.pk} is still {run.status}: wait for it to finish")
    gate = getattr(run, "gate", None)
    if gate is None:
        raise InvalidRequestError(
            f"run {run.pk} has no gate: more cases are run only to settle an inconclusive gate"
        )
    if gate.outcome == "inconclusive" and not more_cases_may_settle(gate.outcome, gate.rules):
        raise InvalidRequestError(
            f"the gate of run {run.pk} waits only for a first approved release to compare "
            "with (baseline: last_approved), which no number of cases settles"
        )
    if gate.outcome != "inconclusive":
        raise InvalidRequestError(
            f"the gate of run {run.pk} is decided ({gate.outcome}); more cases are run only "
            "while a gate is inconclusive (a sequential failure is final)"
        )
    state = sequential_state(run)
    if state is None:
        raise InvalidRequestError(
            f"run {run.pk} was not run sequentially on the workers, so its gate was read "
            "for a fixed number of cases: give its policy `sequential:` and submit it "
            "again to add cases in batches (docs/policy.md, Sequential gates)"
        )
    done, horizon = int(state["n_run"]), int(state["horizon"])
    if done >= horizon:
        raise InvalidRequestError(
            f"all {horizon} cases of run {run.pk}'s dataset have run: there are no more to add"
        )
    return state, min(horizon, done + int(state["batch"])) * sequential_repeats(state)
