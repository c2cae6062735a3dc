"""Which cases' recorded outputs differ between two finished runs, asked of the database.

A case result keeps its output as JSON and no digest of it, so the database pairs the
two runs' rows by case id and compares them where they lie: one query, which returns
only the ids that differ, however large the outputs. "Differs" is the engine's
`outputs_changed`: another output or another error (type and message), for a case in
both runs. PostgreSQL compares the outputs as JSON values; SQLite compares the JSON
text each run stored, written by the same encoder, so the two agree unless a system
returns the same object with its keys in another order. A finished run's cases never
change, so the answer is cached under both runs' finishing times, like the comparison.
"""

from __future__ import annotations

from django.core.cache import cache
from django.db import connections

from runs.models import CaseResult, Run

OUTPUTS_CACHE_S = 3600


def runs_outputs_changed(*, baseline: Run, candidate: Run) -> frozenset[str]:
    """Ids of the cases in both runs whose recorded output or error differs."""
    key = f"oloproof:outputs-changed:{_stamp(baseline)}:{_stamp(candidate)}"
    found = cache.get(key)
    if found is None:
        found = frozenset(_differing_ids(baseline.pk, candidate.pk))
        cache.set(key, found, OUTPUTS_CACHE_S)
    return found


def _stamp(run: Run) -> str:
    # No spaces in a key: memcached, a likely production cache, refuses them.
    finished = "-" if run.finished_at is None else f"{run.finished_at.timestamp():.6f}"
    return f"{run.pk}-{finished}"


def _differing_ids(baseline_id: int, candidate_id: int) -> list[str]:
    connection = connections[CaseResult.objects.all().db]
    quote = connection.ops.quote_name
    table = quote(CaseResult._meta.db_table)
    # The columns' names, as the recording writes them (`runs.models.case_rows`).
    run, case_id, output, error_type, message = (
        quote(name) for name in ("run_id", "case_id", "output", "error_type", "error_message")
    )
    # NULL-safe without IS DISTINCT FROM (which SQLite spells IS NOT): an output on one
    # side only is a difference, none on both sides is not.
    sql = (
        f"SELECT c.{case_id} FROM {table} c JOIN {table} b "
        f"ON b.{run} = %s AND b.{case_id} = c.{case_id} "
        f"WHERE c.{run} = %s AND ((c.{output} IS NULL) <> (b.{output} IS NULL) "
        f"OR c.{output} <> b.{output} OR c.{error_type} <> b.{error_type} "
        f"OR c.{message} <> b.{message})"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [baseline_id, candidate_id])
        return [row[0] for row in cursor.fetchall()]
