"""Bulk-build a large recorded history straight into the database (no evaluation).

10,000 small runs across systems and releases (with metrics, gates and a few
approvals), one run of 100,000 cases, and two mid-sized runs on a shared dataset
for the compare page. Rows are written with bulk_create in batches; the runs'
dates are spread over a year with one UPDATE.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db import connection, transaction
from django.utils import timezone

from metrics.models import CaseVerdict, MetricEstimate
from runs.access import LOCAL
from runs.models import (
    Approval,
    CaseResult,
    Dataset,
    DatasetCase,
    Gate,
    Optimization,
    Project,
    Release,
    Run,
    System,
)
from runs.writers.projects import membership_set, project_default_ensure
from runs.writers.search_rows import search_rows_add

BATCH = 5000
CRITERIA = ("exact_label", "known_label", "tone")


@dataclass(frozen=True, slots=True)
class History:
    big_run: int
    typical_run: int
    compare_pair: tuple[int, int]
    system_id: int
    big_case_id: str
    optimization_id: int


def _chunks(items: list[Any], size: int = BATCH) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _dataset(digest: str, n_cases: int) -> Dataset:
    dataset = Dataset.objects.create(digest=digest, source=f"bench/{digest}.jsonl", n_cases=n_cases)
    rows = [
        DatasetCase(
            dataset=dataset,
            case_id=f"case_{i:06d}",
            position=i,
            input={"question": f"Where is parcel {i}?"},
            expected={"label": "shipping"},
            cluster=f"user_{i % 997}",
        )
        for i in range(n_cases)
    ]
    for batch in _chunks(rows):
        DatasetCase.objects.bulk_create(batch)
    return dataset


UNDECIDED_POLICY: dict[str, Any] = {
    "version": 1,
    "rules": [{"metric": "exact_label", "min": 0.95}],
    "effect": 0.05,
}


def _undecided_gate(run_id: int, n: int) -> None:
    """An inconclusive gate with its policy recorded, so the run page plans its cases."""
    Run.objects.filter(pk=run_id).update(provenance={"policy": UNDECIDED_POLICY})
    estimate = MetricEstimate.objects.get(run_id=run_id, metric="exact_label")
    figures = {
        "estimate": estimate.estimate,
        "lower": estimate.lower,
        "upper": estimate.upper,
        "threshold": 0.95,
        "side": "min",
        "n_observed": estimate.n_observed,
        "n_missing": estimate.n_missing,
        "method": estimate.method,
    }
    rule = {"rule": "exact_label ≥ 0.95", "kind": "bound", "metric": "exact_label"}
    Gate.objects.create(
        run_id=run_id,
        outcome="inconclusive",
        summary=f"gate INCONCLUSIVE over {n} cases",
        rules=[{**rule, "outcome": "inconclusive", "figures": figures, "more_cases": None}],
        decided_at=timezone.now(),
    )


def _estimates(run_id: int, rng: random.Random, n: int) -> list[MetricEstimate]:
    rows = []
    for position, criterion in enumerate(CRITERIA):
        estimate = rng.uniform(0.6, 0.99)
        missing = rng.choice((0, 0, 0, 1, 3))
        rows.append(
            MetricEstimate(
                run_id=run_id,
                metric=criterion,
                criterion=criterion,
                estimate=estimate,
                lower=max(0.0, estimate - 0.08),
                upper=min(1.0, estimate + 0.05),
                method="clopper-pearson exact",
                confidence=0.95,
                n_observed=n - missing,
                n_missing=missing,
                value_type="pass_fail",
                score_range=[0.0, 1.0],
                position=position,
            )
        )
    return rows


def _cases(run: Run, n: int, rng: random.Random, fail_rate: float) -> None:
    """n case results with two verdicts each; about 2 % missing."""
    results: list[CaseResult] = []
    verdicts: list[CaseVerdict] = []
    for i in range(n):
        case_id = f"case_{i:06d}"
        draw = rng.random()
        missing = draw < 0.02
        failed = not missing and draw < 0.02 + fail_rate
        outcome = "missing" if missing else "failed" if failed else "passed"
        results.append(
            CaseResult(
                run=run,
                case_id=case_id,
                position=i,
                output=None if missing else {"label": "other" if failed else "shipping"},
                error_type="TimeoutError" if missing else "",
                error_message="backend did not answer" if missing else "",
                latency_ms=rng.uniform(5, 400),
                outcome=outcome,
            )
        )
        value = None if missing else (0.0 if failed else 1.0)
        for criterion in ("exact_label", "known_label"):
            verdicts.append(CaseVerdict(run=run, case_id=case_id, criterion=criterion, value=value))
        if len(verdicts) >= 2 * BATCH:
            CaseResult.objects.bulk_create(results)
            CaseVerdict.objects.bulk_create(verdicts)
            results, verdicts = [], []
    CaseResult.objects.bulk_create(results)
    CaseVerdict.objects.bulk_create(verdicts)
    search_rows_add(run_id=run.pk, new_run=True)  # as the recording does after its rows


def value_columns_keep(run: Run) -> None:
    """What the recording keeps when a run concludes, through the same writer."""
    from metrics.services import run_value_columns_put
    from runs.selectors.results import run_result

    run_value_columns_put(run_id=run.pk, result=run_result(run=run, with_content=False))


def build_history(
    *, n_runs: int = 10_000, big_cases: int = 100_000, pair_cases: int = 2_000
) -> History:
    rng = random.Random(20240601)
    user = User.objects.create_user(username="bench", password="bench-password-long")
    project = project_default_ensure()
    membership_set(by=LOCAL, project=project, user=user, role="approver")
    systems = [System.objects.create(project=project, name=f"bot-{i}") for i in range(5)]
    releases = [
        Release.objects.create(system=system, version=f"{major}.{minor}")
        for system in systems
        for major in range(1, 5)
        for minor in range(10)
    ]
    small = _dataset("a" * 64, 50)
    with transaction.atomic():
        runs = [
            Run(
                project=project,
                release=rng.choice(releases),
                dataset=small,
                status=rng.choices(
                    ("succeeded", "failed", "running", "queued"), weights=(95, 3, 1, 1)
                )[0],
                cases_total=50,
                cases_done=50,
                cases_failed=rng.choice((0, 0, 0, 1, 3)),
                provenance={"library_version": "bench"},
            )
            for _ in range(n_runs)
        ]
        for batch in _chunks(runs):
            Run.objects.bulk_create(batch)
        run_ids = list(Run.objects.order_by("id").values_list("id", flat=True))
        with connection.cursor() as cursor:
            # Spread the runs over the past year, oldest first.
            cursor.execute(
                "UPDATE runs_run SET created_at = %s WHERE id = %s",
                [timezone.now(), run_ids[-1]],
            )
            start = timezone.now() - timedelta(days=365)
            step = timedelta(days=365) / max(1, len(run_ids))
            cursor.executemany(
                "UPDATE runs_run SET created_at = %s WHERE id = %s",
                [(start + step * index, run_id) for index, run_id in enumerate(run_ids)],
            )
        estimates = [row for run_id in run_ids for row in _estimates(run_id, rng, 50)]
        for batch in _chunks(estimates):
            MetricEstimate.objects.bulk_create(batch)
        gates = [
            Gate(
                run_id=run_id,
                outcome=rng.choices(("pass", "fail", "inconclusive"), weights=(70, 15, 15))[0],
                summary="gate decided by the bench policy",
                rules=[],
                decided_at=timezone.now(),
            )
            for run_id in run_ids
        ]
        for batch in _chunks(gates):
            Gate.objects.bulk_create(batch)
        Approval.objects.bulk_create(
            Approval(gate=gate, user=user, decision="approve", gate_outcome=gate.outcome)
            for gate in Gate.objects.filter(outcome="pass").order_by("id")[:300]
        )

    big_dataset = _dataset("b" * 64, big_cases)
    big = Run.objects.create(
        project=project,
        release=releases[0],
        dataset=big_dataset,
        status="succeeded",
        cases_total=big_cases,
        cases_done=big_cases,
    )
    with transaction.atomic():
        _cases(big, big_cases, rng, fail_rate=0.08)
        MetricEstimate.objects.bulk_create(_estimates(big.pk, rng, big_cases))
        value_columns_keep(big)

    pair_dataset = _dataset("c" * 64, pair_cases)
    pair = []
    for release, fail_rate in ((releases[1], 0.10), (releases[2], 0.07)):
        run = Run.objects.create(
            project=project,
            release=release,
            dataset=pair_dataset,
            status="succeeded",
            cases_total=pair_cases,
            cases_done=pair_cases,
        )
        with transaction.atomic():
            _cases(run, pair_cases, rng, fail_rate=fail_rate)
            MetricEstimate.objects.bulk_create(_estimates(run.pk, rng, pair_cases)[:2])
            value_columns_keep(run)
        pair.append(run.pk)
    _undecided_gate(pair[1], pair_cases)
    return History(
        optimization_id=_optimization(project, pair).pk,
        big_run=big.pk,
        typical_run=run_ids[len(run_ids) // 2],
        compare_pair=(pair[0], pair[1]),
        system_id=systems[0].pk,
        big_case_id=f"case_{big_cases // 2:06d}",
    )


def _optimization(project: Project, runs: list[int]) -> Optimization:
    """A finished optimization whose seed and winner were proven on the compare pair."""
    return Optimization.objects.create(
        project=project,
        system_name="bot-1",
        engine="gepa",
        status=Optimization.Status.SUCCEEDED,
        seed_test_run_id=runs[0],
        winner_test_run_id=runs[1],
        winner_index=1,
    )
