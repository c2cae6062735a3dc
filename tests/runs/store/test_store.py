"""DjangoStore: the engine's Store kept in the database, round trip and bulk behaviour."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from metrics.models import CachedVerdict, CaseVerdict, Evaluator, MetricEstimate
from oloproof_core.cases.verdict import Verdict
from oloproof_core.results.store import CacheEntry
from runs.models import CaseResult, Dataset, DatasetCase, Gate, Run
from runs.selectors.results import run_result
from runs.services import approval_create
from runs.store import DjangoStore
from runs.writers.recording import gate_record
from tests.runs.conftest import record_evaluation

pytestmark = pytest.mark.django_db


def test_a_recorded_run_reads_back_as_the_same_result() -> None:
    result = record_evaluation(30, broken_every=10, wrong_every=4)
    run = Run.objects.get(pk=int(result.run_id))

    assert run.status == Run.Status.SUCCEEDED
    assert str(run.release) == "support-bot@1"
    assert (run.cases_total, run.cases_failed) == (30, 3)
    assert run.dataset.n_cases == 30
    assert run.dataset.cases.count() == 30
    assert CaseResult.objects.filter(run=run).count() == 30
    broken = CaseResult.objects.get(run=run, case_id="case_00010")
    assert broken.error_type == "RuntimeError"
    assert "backend down" in broken.error_message
    assert broken.outcome == CaseResult.Outcome.MISSING
    assert CaseResult.objects.get(run=run, case_id="case_00001").outcome == "failed"
    assert CaseResult.objects.get(run=run, case_id="case_00002").outcome == "passed"
    assert CaseVerdict.objects.filter(run=run).count() == 60

    loaded = run_result(run=run)
    assert [m.to_dict() for m in loaded.metrics] == [m.to_dict() for m in result.metrics]
    assert [c.id for c in loaded.cases] == [c.id for c in result.cases]
    for original, reread in zip(result.cases, loaded.cases, strict=True):
        assert reread.output == original.output
        assert reread.expected == original.expected
        assert reread.cluster == original.cluster
        assert {k: v.value for k, v in reread.verdicts.items()} == {
            k: v.value for k, v in original.verdicts.items()
        }


def test_metrics_keep_interval_counts_and_evaluator_versions() -> None:
    result = record_evaluation(12, broken_every=5)
    estimates = {m.metric: m for m in MetricEstimate.objects.filter(run_id=int(result.run_id))}
    engine = result.metric("exact_label")
    stored = estimates["exact_label"]
    assert (stored.estimate, stored.lower, stored.upper) == (
        engine.estimate,
        engine.interval.lower,
        engine.interval.upper,
    )
    assert (stored.n_observed, stored.n_missing) == (engine.n_observed, engine.n_missing)
    versions = {item["criterion"]: item["version"] for item in result.provenance["evaluators"]}
    assert stored.evaluator.version == versions["exact_label"]
    assert Evaluator.objects.count() == 2


def test_a_dataset_is_stored_once_and_a_second_run_reuses_the_cache() -> None:
    first = record_evaluation(15)
    second = record_evaluation(15, version="2")
    assert Dataset.objects.count() == 1
    assert DatasetCase.objects.count() == 15
    # Fifteen cases, a handful of distinct (output, expected) pairs: each judged once.
    judging = first.provenance["judging"]["exact_label"]
    distinct = len({(str(c.output), str(c.expected)) for c in first.cases if c.error is None})
    assert (judging["judged"], judging["judged"] + judging["cached"]) == (distinct, 15)
    assert second.provenance["judging"]["exact_label"] == {
        "judged": 0,
        "cached": 15,
        "failed": 0,
        "skipped": 0,
    }
    assert CaseVerdict.objects.filter(run_id=int(second.run_id), cached=True).count() == 30


def test_verdict_cache_round_trip_in_batches_beyond_the_sqlite_variable_limit() -> None:
    store = DjangoStore()
    entries = [
        CacheEntry(
            key=f"{i:064x}",
            evaluator_version="v1",
            criterion="quality",
            verdict=Verdict(value=i % 3 / 2, feedback=f"case {i}", scores={"tone": 0.5}),
        )
        for i in range(2500)
    ]
    store.put_verdicts(entries)
    store.put_verdicts(entries[:10])  # again: harmless
    assert CachedVerdict.objects.count() == 2500
    wanted = [entry.key for entry in entries[::2]] + ["f" * 64]
    found = store.get_verdicts(wanted)
    assert len(found) == 1250
    sample = found[entries[4].key]
    assert (sample.value, sample.feedback, dict(sample.scores), sample.cached) == (
        0.5,
        "case 4",
        {"tone": 0.5},
        True,
    )


def _record_queries(n: int) -> int:
    result = record_evaluation(n, record=False)
    with CaptureQueriesContext(connection) as queries:
        DjangoStore(batch_size=1000).record_run(result)
    return len(queries)


def test_recording_costs_a_handful_of_queries_per_batch_not_per_case() -> None:
    _record_queries(10)  # the system, release and evaluators now exist
    small = _record_queries(1000)
    large = _record_queries(5000)
    # 4 more batches of 1000 cases: one insert each for dataset rows, case results and
    # verdicts (two for verdicts: 2 criteria per case) — never one per case.
    assert large - small <= 4 * 4, (small, large)
    assert large <= 40, large


def test_recording_stays_within_a_fixed_query_budget(django_assert_max_num_queries) -> None:
    result = record_evaluation(2000, record=False)
    with django_assert_max_num_queries(40):
        DjangoStore(batch_size=2000).record_run(result)


def test_a_retried_chunk_never_duplicates_a_case() -> None:
    from runs.writers.recording import case_results_create

    result = record_evaluation(10)
    run_id = int(result.run_id)
    case_results_create(run_id=run_id, cases=result.cases[3:8], pass_fail=frozenset())
    assert CaseResult.objects.filter(run_id=run_id).count() == 10


def test_find_baseline_takes_the_release_or_the_last_approved_run(approver) -> None:
    store = DjangoStore()
    assert store.find_baseline("support-bot", None) is None
    one = record_evaluation(8, version="1")
    record_evaluation(8, version="2")
    assert store.find_baseline("support-bot", "1").run_id == one.run_id
    assert store.find_baseline("support-bot", "3") is None
    assert store.find_baseline("support-bot", None) is None
    run = Run.objects.get(pk=int(one.run_id))
    gate_record(run=run, gate={"outcome": "pass", "summary": "gate PASS", "rules": []})
    approval_create(run=run, user=approver, decision="approve", comment="looks good")
    baseline = store.find_baseline("support-bot", None)
    assert baseline is not None
    assert baseline.run_id == one.run_id
    assert baseline.metric("exact_label").estimate == 1.0
    assert Gate.objects.get(run=run).outcome == "pass"
