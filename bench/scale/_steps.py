"""The steps of `bench.scale`, each run in a process of its own on the scratch database.

`prepare` records a dataset, plans a queued run over it and writes its cases and
verdicts with the bulk path (no system runs: the figures are about the platform), so
the run stands as its workers leave it, every chunk done. `finalise` concludes it in a
fresh process and measures that step alone.
"""

from __future__ import annotations

import os
import resource
import textwrap
import time
import tracemalloc
from pathlib import Path
from typing import Any

CRITERION = "exact_label"
SCORE_CRITERION = "quality"
"""A score metric beside the pass/fail one: its interval is the betting one."""
ERROR_EVERY = 50
"""One case in 50 has its system fail (its verdicts are then missing)."""


def django_setup(*, migrate: bool) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
    import django

    django.setup()
    if migrate:
        from django.core.management import call_command

        call_command("migrate", interactive=False, verbosity=0)


def write_project(folder: Path) -> dict[str, Any]:
    """A trivial pass/fail project (a system, ExactMatch, a policy); its run config."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.py").write_text(
        "from oloproof import system\n\n\n@system(name='scale-bot', version='1')\n"
        "def answer(case):\n    return {'label': 'refund'}\n",
        encoding="utf-8",
    )
    (folder / f"{SCORE_CRITERION}.py").write_text(
        "def score(input, output):\n    return 0.5, {'feedback': ''}\n", encoding="utf-8"
    )
    (folder / "data.jsonl").write_text('{"id": "a", "input": {"q": 1}}\n', encoding="utf-8")
    (folder / "release.yaml").write_text(
        textwrap.dedent(
            f"""\
            version: 1
            rules:
              - metric: {CRITERION}
                min: 0.5
              - metric: {SCORE_CRITERION}
                min: 0.3
              - missing: {{max_rate: 0.05}}
            """
        ),
        encoding="utf-8",
    )
    return {
        "system": "bot.py:answer",
        "dataset": "data.jsonl",
        "evaluators": [
            {"ExactMatch": {"criterion": CRITERION, "field": "label"}},
            f"{SCORE_CRITERION}.py",
        ],
        "policy": "release.yaml",
    }


def dataset_rows(n_cases: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"case_{i:07d}",
            "input": {"question": f"question {i}"},
            "expected": {"label": "refund"},
        }
        for i in range(n_cases)
    ]


def counted(call: Any) -> tuple[Any, int, float]:
    """`call()`'s value, how many statements it sent, and its seconds."""
    from django.db import connection

    sent = 0

    def count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        nonlocal sent
        sent += 1
        return execute(sql, params, many, context)

    started = time.perf_counter()
    with connection.execute_wrapper(count):
        value = call()
    return value, sent, time.perf_counter() - started


def prepare(n_cases: int, folder: Path, chunk_size: int) -> dict[str, Any]:
    """Record the dataset, plan the run, write its cases as finished chunks."""
    django_setup(migrate=True)
    from django.conf import settings

    import oloproof_core as engine
    from runs.access import LOCAL
    from runs.workers import planning
    from runs.writers.projects import code_root_register, project_default_ensure
    from runs.writers.recording import run_queued_create

    settings.OLOPROOF_CHUNK_SIZE = chunk_size
    config = write_project(folder)
    project = project_default_ensure()
    code_root_register(by=LOCAL, project=project, path=str(folder))
    dataset, dataset_queries, dataset_s = _dataset_record(n_cases)
    run = run_queued_create(
        project=project,
        config={**engine.check_run_config(config, label="bench"), "base_dir": str(folder)},
        confidence=0.95,
        dataset=dataset,
    )
    sent: list[int] = []
    planning.send_work_on_commit = lambda work: sent.extend(work.chunks)  # no broker here
    outcome, planning_queries, planning_s = counted(lambda: planning.run_start(run_id=run.pk))
    assert outcome == "started", outcome
    _cases_write(run.pk, n_cases)
    return {
        "run_id": run.pk,
        "dataset_queries": dataset_queries,
        "dataset_seconds": round(dataset_s, 2),
        "planning_queries": planning_queries,
        "planning_seconds": round(planning_s, 2),
        "chunks": len(sent),
    }


def _dataset_record(n_cases: int) -> tuple[Any, int, float]:
    import oloproof_core as engine
    from runs.writers.dataset_recording import dataset_record

    data = engine.load_dataset(dataset_rows(n_cases))
    return counted(lambda: dataset_record(data))


def _cases_write(run_id: int, n_cases: int) -> None:
    """The run's cases and verdicts, as its chunks would have written them; chunks done."""
    from django.db import transaction
    from django.utils import timezone

    from metrics.bulk_rows import rows_insert
    from metrics.models import CaseVerdict
    from runs.models import CaseResult, Run, RunChunk
    from runs.models.case_rows import CASE_RESULT_COLUMNS

    def failed(i: int) -> bool:
        return i % ERROR_EVERY == 0

    verdict_columns = ("run_id", "case_id", "criterion", "value", "scores", "error", "cached")
    with transaction.atomic():
        rows_insert(model=CaseResult, columns=CASE_RESULT_COLUMNS, ignore_conflicts=False, rows=(
            (run_id, f"case_{i:07d}", i, None if failed(i) else {"label": "refund"},
             "TimeoutError" if failed(i) else "", "slow" if failed(i) else "", "", 1.5, None,
             {}, [], "missing" if failed(i) else ("passed" if i % 7 else "failed"))
            for i in range(n_cases)
        ))  # fmt: skip
        rows_insert(model=CaseVerdict, columns=verdict_columns, ignore_conflicts=False, rows=(
            (run_id, f"case_{i:07d}", CRITERION, None if failed(i) else float(i % 7 != 0), {},
             "not judged" if failed(i) else None, False)
            for i in range(n_cases)
        ))  # fmt: skip
        rows_insert(model=CaseVerdict, columns=verdict_columns, ignore_conflicts=False, rows=(
            (run_id, f"case_{i:07d}", SCORE_CRITERION, None if failed(i) else (i * 37 % 101) / 100,
             {}, "not judged" if failed(i) else None, False)
            for i in range(n_cases)
        ))  # fmt: skip
        RunChunk.objects.filter(run_id=run_id).update(
            status=RunChunk.Status.DONE, claimed_by="bench:1", finished_at=timezone.now()
        )
        Run.objects.filter(pk=run_id).update(cases_done=n_cases)


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def finalise(run_id: int, *, old: bool, trace: bool) -> dict[str, Any]:
    """Conclude the run once, in this fresh process: the conclusion's peak memory
    (tracemalloc) or its resident memory and seconds. `old`: read the cases whole, as
    finalising did before it read value columns."""
    django_setup(migrate=False)
    import oloproof_core.gates  # noqa: F401  (loaded before measuring: a worker has them)
    from metrics.models import MetricEstimate
    from runs.models import Run
    from runs.selectors.results import run_result
    from runs.workers import finalising
    from runs.workers.run_code import run_plan_load

    if old:
        # Whole cases where the columns were: what finalising read before.
        finalising.run_case_columns = lambda *, run, criteria, scored=(): run_result(run=run).cases  # type: ignore[assignment,return-value]
    Run.objects.filter(pk=run_id).update(status=Run.Status.RUNNING)  # conclude it again
    run = Run.objects.get(pk=run_id)
    run_plan_load(run=run)
    engine_stats_load()
    before = rss_mb()
    if trace:
        tracemalloc.start()
    started = time.perf_counter()
    outcome = finalising.run_finalise(run_id=run_id)
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1] if trace else 0
    tracemalloc.stop()
    assert outcome == "succeeded", outcome
    estimate = MetricEstimate.objects.get(run_id=run_id, metric=CRITERION)
    score = MetricEstimate.objects.get(run_id=run_id, metric=SCORE_CRITERION)
    run.refresh_from_db()
    return {
        "old": old,
        "trace": trace,
        "seconds": round(seconds, 2),
        "peak_mb": round(peak / 2**20, 2),
        "rss_before_mb": round(before, 1),
        "rss_max_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "estimate": estimate.estimate,
        "interval": [estimate.lower, estimate.upper],
        "score_estimate": score.estimate,
        "score_interval": [score.lower, score.upper],
        "gate": run.gate.outcome,
    }


def engine_stats_load() -> None:
    """The statistics a conclusion reads, loaded as in a worker that concluded before."""
    from oloproof_core import stats

    stats.proportion_interval(1, 2, 0, 0.95)
    stats.mean_interval([0.5, 0.7], 0, 0.0, 1.0, 0.95)
