"""Full-text search of a run's cases, on SQLite (FTS5) and PostgreSQL (tsvector + GIN).

Run with DATABASE_URL=$OLOPROOF_TEST_DATABASE_URL_PG for the PostgreSQL path.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test.utils import CaptureQueriesContext

from oloproof import evaluate, system
from oloproof.evaluators import ExactMatch
from runs.models import CaseResult, Run
from runs.selectors import case_search
from runs.selectors.case_search import SEARCH_FIELDS, case_search_filter, search_words
from runs.selectors.cases import CaseFilters, run_case_table
from runs.store import DjangoStore

pytestmark = pytest.mark.django_db

ROWS = [
    {"id": "alpha-1", "input": {"question": "Where is my parcel?"}, "expected": {"label": "ship"}},
    {"id": "alpha-2", "input": {"question": "I want a refund"}, "expected": {"label": "money"}},
    {"id": "beta-3", "input": {"question": "Café au lait, s'il vous plaît"}, "expected": None},
    {"id": "beta-4", "input": {"question": "crash please"}, "expected": {"label": "x"}},
]


@system(name="search-bot", version="1")
def search_bot(case: dict[str, Any]) -> Any:
    question = case["question"]
    if "crash" in question:
        raise ConnectionError("upstream gateway unreachable")
    if "refund" in question:
        return "=HYPERLINK(refund approved)"
    return {"label": "other", "reason": f"looked at {len(question)} characters"}


@pytest.fixture(autouse=True, params=["few matches", "many matches", "common at once"])
def matches(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """PostgreSQL reads few matches by id and tests each row for many, and takes a search
    matching many of the run's first cases for common at once: all must agree. (SQLite
    has one path; it runs every way alike.)"""
    if request.param == "many matches":
        monkeypatch.setattr(case_search, "FEW_MATCHES", 0)
    if request.param == "common at once":
        monkeypatch.setattr(case_search, "COMMON_IN_SAMPLE", 1)
    return str(request.param)


def recorded(rows: list[dict[str, Any]] = ROWS) -> Run:
    result = evaluate(
        search_bot,
        rows,
        [ExactMatch(criterion="exact_label", field="label")],
        store=DjangoStore(),
        concurrency=1,
        isolation="thread",  # what is searched is the record, not how it was made
    )
    return Run.objects.get(pk=int(result.run_id))


def found(run: Run, text: str, field: str | None = None) -> list[str]:
    filters = CaseFilters(search=text, search_in=field)
    return [case.case_id for case in run_case_table(run=run, filters=filters)]


def test_search_finds_words_in_input_expected_output_error_and_id() -> None:
    run = recorded()
    assert found(run, "parcel") == ["alpha-1"]  # input
    assert found(run, "money") == ["alpha-2"]  # expected
    assert found(run, "hyperlink") == ["alpha-2"]  # output (a plain string)
    assert found(run, "characters") == ["alpha-1", "beta-3"]  # output (a JSON value)
    assert found(run, "gateway unreachable") == ["beta-4"]  # error message
    assert found(run, "ConnectionError") == ["beta-4"]  # error type
    assert found(run, "beta") == ["beta-3", "beta-4"]  # case id (its start)
    assert found(run, "alpha-2") == ["alpha-2"]


def test_search_matches_word_starts_every_word_and_one_field() -> None:
    run = recorded()
    assert found(run, "parc") == ["alpha-1"]
    assert found(run, "PARCEL") == ["alpha-1"]
    assert found(run, "café") == ["beta-3"]
    assert found(run, "parcel money") == []  # both words, in one case
    assert found(run, "refund approved") == ["alpha-2"]  # input and output of one case
    assert found(run, "refund", "input") == ["alpha-2"]
    assert found(run, "refund", "expected") == []
    assert found(run, "refund", "output") == ["alpha-2"]
    assert found(run, "alpha", "case_id") == ["alpha-1", "alpha-2"]
    assert found(run, "alpha", "output") == []


def test_json_keys_are_not_searched_only_values() -> None:
    run = recorded()
    assert found(run, "label") == []
    assert found(run, "question") == []
    assert found(run, "reason") == []


def test_query_syntax_is_never_run_as_index_syntax() -> None:
    run = recorded()
    for text in ('"', "*", "parcel*", 'NEAR("a" "b")', "a:b", "'); DROP TABLE x; --", "{input}"):
        found(run, text)  # no error from either index's query language
    assert found(run, "!!! ... ???") == []  # no word: nothing, not everything
    assert search_words("It's a parcel_tracker, 2.5!") == [
        "it",
        "s",
        "a",
        "parcel",
        "tracker",
        "2",
        "5",
    ]


def test_the_search_reads_only_its_own_run() -> None:
    first = recorded()
    second = recorded([{**row, "id": f"{row['id']}-b"} for row in ROWS])
    assert found(first, "parcel") == ["alpha-1"]
    assert found(second, "parcel") == ["alpha-1-b"]


def test_cases_recorded_later_and_deleted_cases_keep_the_index_in_step() -> None:
    run = recorded()
    CaseResult.objects.filter(run=run, case_id="beta-4").delete()
    assert found(run, "unreachable") == []
    other = recorded([{"id": "late", "input": {"question": "crash later"}, "expected": None}])
    assert found(other, "unreachable") == ["late"]
    Run.objects.filter(pk=other.pk).delete()
    assert found(run, "unreachable") == []


def test_deleting_a_case_result_the_index_never_held_leaves_the_index_whole() -> None:
    run = recorded()
    other = recorded([{"id": "late", "input": {"question": "crash later"}, "expected": None}])
    with connection.cursor() as cursor:  # written around the recording, so not indexed
        cursor.execute(
            "INSERT INTO runs_caseresult (run_id, case_id, position, output, error_type, "
            "error_message, error_traceback, artifacts, model_calls, outcome) "
            "VALUES (%s, 'stray', 9, '\"zebra\"', '', '', '', '{}', '[]', 'passed')",
            [other.pk],
        )
    Run.objects.filter(pk=other.pk).delete()
    CaseResult.objects.filter(run=run, case_id="alpha-2").update(output="zebra")
    assert found(run, "zebra") == ["alpha-2"]
    assert found(run, "parcel") == ["alpha-1"]
    # The index counts its rows: one taken away too many breaks it once it empties.
    Run.objects.all().delete()
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO runs_caseresult_search (runs_caseresult_search) "
                           "VALUES ('integrity-check')")  # fmt: skip


def test_one_search_costs_a_fixed_number_of_queries() -> None:
    run = recorded()
    with CaptureQueriesContext(connection) as few:
        found(run, "parcel")
    with CaptureQueriesContext(connection) as more:
        found(run, "parcel where is my")
    assert len(few) == len(more)
    assert len(more) <= 5  # SQLite first reads the id ranges of the run and its dataset


def test_unknown_search_fields_are_refused() -> None:
    run = recorded()
    with pytest.raises(ValueError, match="unknown search fields"):
        case_search_filter(run=run, text="x", fields=("nowhere",))
    assert set(SEARCH_FIELDS) == {"input", "expected", "output", "error", "case_id"}


def _search_objects() -> set[str]:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE name LIKE '%%_search%%'")
        else:
            cursor.execute(
                "SELECT indexname FROM pg_indexes WHERE indexname LIKE '%%_search' UNION "
                "SELECT proname FROM pg_proc WHERE proname LIKE 'oloproof_%%'"
            )
        return {row[0] for row in cursor.fetchall()}


EXPECTED_OBJECTS = {
    "sqlite": {
        # new rows are added by the recording (runs.writers.search_rows), not by a trigger
        f"runs_caseresult_search{suffix}"
        for suffix in ("", "_delete", "_update")
    },
    "postgresql": {
        "case_result_search",
        "dataset_case_search",
        "oloproof_case_result_search",
        "oloproof_dataset_case_search",
        "oloproof_json_words",
        "oloproof_search_words",
    },
}


def test_the_search_index_survives_every_later_migration() -> None:
    """A later migration that rebuilds a table on SQLite would drop its triggers silently."""
    assert EXPECTED_OBJECTS[connection.vendor] <= _search_objects()


@pytest.mark.django_db(transaction=True)
def test_the_search_migration_is_reversible_and_indexes_existing_rows() -> None:
    run = recorded()
    with migrated_back_to("0008_case_annotations"):
        assert not EXPECTED_OBJECTS[connection.vendor] & _search_objects()
    assert EXPECTED_OBJECTS[connection.vendor] <= _search_objects()
    assert found(run, "parcel") == ["alpha-1"]  # rows recorded before the index was made


def test_a_chunk_recorded_twice_is_indexed_once_and_later_chunks_are_found() -> None:
    from oloproof_core import CaseResult as EngineCase
    from runs.writers.recording import case_results_create

    run = recorded(ROWS[:2])
    later = [
        EngineCase(id=f"late-{i}", input={"q": "x"}, expected=None, output={"text": f"zebra {i}"})
        for i in range(3)
    ]
    for _ in range(2):  # a chunk delivered twice
        case_results_create(run_id=run.pk, cases=later, pass_fail=frozenset(), first_position=2)
    assert found(run, "zebra") == ["late-0", "late-1", "late-2"]
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT count(*) FROM runs_caseresult_search")
            assert cursor.fetchone()[0] == CaseResult.objects.count() == 5


@contextmanager
def migrated_back_to(migration: str) -> Iterator[None]:
    """The database at `runs`' `migration`, and at the latest migrations again afterwards,
    whatever happens inside: a test that stopped at an old schema would break every test
    after it on the same database."""
    MigrationExecutor(connection).migrate([("runs", migration)])
    try:
        yield
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())


@contextmanager
def run_columns_added_later() -> Iterator[None]:
    """At 0009's schema, the columns later migrations add, which today's recording writes:
    runs_run's outcome counts and runs_dataset's label seed and unrepeated digest
    (nullable or with a default: SQLite adds and drops them in place)."""
    from runs.models import Dataset

    fields = [
        *((Run, Run._meta.get_field(name)) for name in RUN_COLUMNS_ADDED_LATER),
        *((Dataset, Dataset._meta.get_field(name)) for name in DATASET_COLUMNS_ADDED_LATER),
    ]
    with connection.schema_editor() as editor:
        for model, field in fields:
            editor.add_field(model, field)
    try:
        yield
    finally:
        with connection.schema_editor() as editor:
            for model, field in fields:
                editor.remove_field(model, field)


RUN_COLUMNS_ADDED_LATER = ("outcome_passed", "outcome_failed", "outcome_missing")
DATASET_COLUMNS_ADDED_LATER = ("label_seed", "unrepeated_digest")


@pytest.mark.django_db(transaction=True)
def test_the_index_keeps_its_rows_back_and_forth_over_the_trigger_migration() -> None:
    """0010 replaces SQLite's insert trigger by the recording's bulk add, and back."""
    with migrated_back_to("0009_case_search"), run_columns_added_later():
        before = recorded()  # indexed by the trigger
    after = recorded([{**row, "id": f"{row['id']}-b"} for row in ROWS])  # by the recording
    assert found(before, "parcel") == ["alpha-1"]
    assert found(after, "parcel") == ["alpha-1-b"]
    if connection.vendor == "sqlite":
        assert "runs_caseresult_search_insert" not in _search_objects()
