"""A 100,000-case run with text worth searching, bulk-written through the real tables.

Inputs are support questions drawn from a small vocabulary plus a unique order number
per case; outputs are a label and a reply; 2 % of cases raise; two criteria (pass/fail
and a score with feedback); 1 % of cases are annotated. Rows go in with bulk_create,
so the search index is filled the way recording fills it (triggers on SQLite, the GIN
index on PostgreSQL).
"""

from __future__ import annotations

import importlib
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import connection, transaction

from metrics.models import CaseVerdict, MetricEstimate
from runs.models import (
    CaseAnnotation,
    CaseAnnotationChange,
    CaseResult,
    Dataset,
    DatasetCase,
    Membership,
    Release,
    Run,
    System,
)
from runs.writers.projects import project_default_ensure
from runs.writers.search_rows import search_rows_add

BATCH = 5000
TOPICS = ("parcel", "refund", "invoice", "password", "delivery", "warranty", "account", "coupon")
VERBS = ("where is", "how do I get", "cancel my", "change my", "problem with", "question about")
LABELS = ("shipping", "billing", "login", "other")


@dataclass(frozen=True, slots=True)
class CaseRun:
    run_id: int
    case_id: str
    rare_word: str


def _chunks(items: list[Any], size: int = BATCH) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _question(rng: random.Random, i: int) -> str:
    return f"{rng.choice(VERBS)} {rng.choice(TOPICS)} order {100000 + i}?"


def _case_results(run: Run, n: int, rng: random.Random) -> list[CaseResult]:
    rows = []
    for i in range(n):
        broken = rng.random() < 0.02
        label = rng.choice(LABELS)
        rows.append(
            CaseResult(
                run=run,
                case_id=f"case_{i:06d}",
                position=i,
                output=None if broken else {"label": label, "reply": f"Sorry, routing to {label}"},
                error_type="TimeoutError" if broken else "",
                error_message="backend did not answer in 30 s" if broken else "",
                latency_ms=rng.uniform(5, 400),
                outcome="missing" if broken else rng.choice(("passed",) * 9 + ("failed",)),
            )
        )
    return rows


def _verdicts(run: Run, results: list[CaseResult], rng: random.Random) -> list[CaseVerdict]:
    rows = []
    for case in results:
        missing = case.output is None
        passed = case.outcome == "passed"
        # A quarter of the replies fall short of the top score (so "failed" on it).
        short = rng.random() < 0.25
        score = None if missing else (round(rng.uniform(0.2, 0.95), 2) if short else 1.0)
        rows.append(
            CaseVerdict(
                run=run,
                case_id=case.case_id,
                criterion="exact_label",
                value=None if missing else (1.0 if passed else 0.0),
            )
        )
        rows.append(
            CaseVerdict(
                run=run,
                case_id=case.case_id,
                criterion="reply_quality",
                value=score,
                feedback=None if score is None else f"tone {score}: greet the customer",
            )
        )
    return rows


def _estimates(run: Run, n: int) -> list[MetricEstimate]:
    return [
        MetricEstimate(
            run=run,
            metric=name,
            criterion=name,
            estimate=0.9,
            lower=0.89,
            upper=0.91,
            method="bench",
            confidence=0.95,
            n_observed=n,
            n_missing=0,
            value_type=kind,
            score_range=[0.0, 1.0],
            position=position,
        )
        for position, (name, kind) in enumerate(
            (("exact_label", "pass_fail"), ("reply_quality", "score"))
        )
    ]


def build_case_run(n_cases: int) -> CaseRun:
    rng = random.Random(20261201)
    project = project_default_ensure()
    user = User.objects.create_user(username="bench", password="bench-password-long")
    Membership.objects.create(project=project, user=user, role="runner")
    system = System.objects.create(project=project, name="bench-bot")
    release = Release.objects.create(system=system, version="1")
    dataset = Dataset.objects.create(digest="d" * 64, source="bench/cases.jsonl", n_cases=n_cases)
    rows = [
        DatasetCase(
            dataset=dataset,
            case_id=f"case_{i:06d}",
            position=i,
            input={"question": _question(rng, i), "channel": rng.choice(("mail", "chat"))},
            expected={"label": rng.choice(LABELS)},
        )
        for i in range(n_cases)
    ]
    run = Run.objects.create(
        project=project, release=release, dataset=dataset, status="succeeded", cases_total=n_cases
    )
    results = _case_results(run, n_cases, rng)
    with transaction.atomic():
        for batch in _chunks(rows):
            DatasetCase.objects.bulk_create(batch)
        for batch in _chunks(results):
            CaseResult.objects.bulk_create(batch)
        search_rows_add(run_id=run.pk, new_run=True)  # as the recording does after its rows
        for batch in _chunks(_verdicts(run, results, rng)):
            CaseVerdict.objects.bulk_create(batch)
        MetricEstimate.objects.bulk_create(_estimates(run, n_cases))
        _annotations(run, results, user, rng)
    _analyze()
    return CaseRun(run_id=run.pk, case_id=f"case_{n_cases // 2:06d}", rare_word="142857")


def _annotations(run: Run, results: list[CaseResult], user: User, rng: random.Random) -> None:
    picked = rng.sample(results, max(1, len(results) // 100))
    notes = [
        CaseAnnotation(
            run=run,
            case_id=case.case_id,
            author=user,
            author_name="bench",
            rating=rng.choice(("pass", "fail")),
            comment="checked by hand",
        )
        for case in picked
    ]
    CaseAnnotation.objects.bulk_create(notes)
    saved = CaseAnnotation.objects.filter(run=run)
    CaseAnnotationChange.objects.bulk_create(
        [
            CaseAnnotationChange(
                annotation=note,
                version=1,
                run=run,
                case_id=note.case_id,
                author_name=note.author_name,
                rating=note.rating,
                comment=note.comment,
            )
            for note in saved
        ]
    )


def _analyze() -> None:
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def _search_statements() -> tuple[list[str], list[str]]:
    """PostgreSQL: the GIN indexes' own statements, as migration 0009 runs them."""
    migration = importlib.import_module("runs.migrations.0009_case_search")
    forward, backward = migration.STATEMENTS["postgresql"]
    return (
        [sql for sql in forward if sql.startswith("CREATE INDEX")],
        [sql for sql in backward if sql.startswith("DROP INDEX")],
    )


def time_inserts(n_cases: int, source_run_id: int) -> dict[str, float]:
    """Seconds to bulk-insert a run's n case results with the search index, and without.

    The same rows into the same table, each into a run of its own. SQLite: with the
    index, the recording's bulk add of the rows follows their insert (runs.writers.search_rows);
    without it, the rows alone. PostgreSQL: for the second, the GIN indexes are dropped,
    the rows written and removed again, and the indexes made again.
    """
    source = Run.objects.get(pk=source_run_id)
    make, drop = _search_statements() if connection.vendor == "postgresql" else ([], [])
    timings: dict[str, float] = {}
    # Alternated twice, the best of each kept: the shared machine's load drifts.
    for name in ("with the search index", "without it") * 2:
        rng = random.Random(7)
        run = Run.objects.create(
            project=source.project,
            release=source.release,
            dataset=source.dataset,
            status="succeeded",
            cases_total=n_cases,
        )
        rows = _case_results(run, n_cases, rng)
        with connection.cursor() as cursor:
            if name == "without it":
                for sql in drop:
                    cursor.execute(sql)
            started = time.perf_counter()
            with transaction.atomic():
                for batch in _chunks(rows):
                    CaseResult.objects.bulk_create(batch)
                if name == "with the search index":
                    search_rows_add(run_id=run.pk, new_run=True)
            seconds = time.perf_counter() - started
            timings[name] = min(seconds, timings.get(name, seconds))
            if name == "without it":
                CaseResult.objects.filter(run=run).delete()
                Run.objects.filter(pk=run.pk).delete()
                for sql in make:
                    cursor.execute(sql)
    return timings
