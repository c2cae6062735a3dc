"""Full-text search over a run's cases: input and expected (dataset rows), output and error.

SQLite: one contentless FTS5 table, a row per case result holding its dataset row's input
and expected value beside its output and error, kept in step by triggers on the case
results (datasets never change), so the one writer of those tables (runs.writers.recording)
keeps writing plain rows, and one FTS5 query answers every word in every field.
PostgreSQL: a stored generated `tsvector` column per table (weighted by field, made by
immutable functions), each with a GIN index. Django's models do not declare the column:
the database fills it on every insert, and runs/selectors/case_search.py queries it.

Both index the values of JSON documents (not their keys), split into runs of letters
and digits, the first 50,000 characters of each field.
"""

from typing import Any

from django.db import migrations

from runs.writers.search_rows import COLUMNS as _COLUMNS
from runs.writers.search_rows import DELETE_ONE as _DELETE
from runs.writers.search_rows import INSERT_ONE as _INSERT
from runs.writers.search_rows import TABLE as _FTS
from runs.writers.search_rows import row_values as _values


SQLITE_FORWARD = [
    f"CREATE VIRTUAL TABLE {_FTS} USING fts5({_COLUMNS}, "
    "content='', tokenize='unicode61 remove_diacritics 0')",
    f"CREATE TRIGGER {_FTS}_insert AFTER INSERT ON runs_caseresult BEGIN {_INSERT} END",
    f"CREATE TRIGGER {_FTS}_delete AFTER DELETE ON runs_caseresult BEGIN {_DELETE} END",
    f"CREATE TRIGGER {_FTS}_update AFTER UPDATE OF output, error_type, error_message "
    f"ON runs_caseresult BEGIN {_DELETE} {_INSERT} END",
    f"INSERT INTO {_FTS}(rowid, {_COLUMNS}) "
    + _values("existing", base="runs_caseresult AS existing"),
]
SQLITE_BACKWARD = [
    f"DROP TRIGGER IF EXISTS {_FTS}_insert",
    f"DROP TRIGGER IF EXISTS {_FTS}_delete",
    f"DROP TRIGGER IF EXISTS {_FTS}_update",
    f"DROP TABLE IF EXISTS {_FTS}",
]

POSTGRES_FORWARD = [
    # Letters and digits of a text, as the SQLite tokenizer splits them, bounded in size.
    """CREATE FUNCTION oloproof_search_words(body text) RETURNS text
       LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
         SELECT regexp_replace(left(coalesce(body, ''), 50000), '[^[:alnum:]]+', ' ', 'g')
       $$""",
    # The string and number values of a JSON document, keys left out.
    """CREATE FUNCTION oloproof_json_words(doc jsonb) RETURNS text
       LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
         SELECT oloproof_search_words(string_agg(item #>> '{}', ' '))
         FROM jsonb_path_query(doc, 'strict $.**') AS item
         WHERE jsonb_typeof(item) IN ('string', 'number')
       $$""",
    """CREATE FUNCTION oloproof_case_result_search(
         output jsonb, error_type text, error_message text) RETURNS tsvector
       LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
         SELECT setweight(to_tsvector('simple', oloproof_json_words(output)), 'A')
             || setweight(to_tsvector('simple',
                  oloproof_search_words(error_type || ' ' || error_message)), 'B')
       $$""",
    """CREATE FUNCTION oloproof_dataset_case_search(input jsonb, expected jsonb)
       RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
         SELECT setweight(to_tsvector('simple', oloproof_json_words(input)), 'A')
             || setweight(to_tsvector('simple', oloproof_json_words(expected)), 'B')
       $$""",
    # Stored, so that the index's recheck (weights and word starts need one) reads the
    # words rather than working them out again from each matching row's JSON.
    """ALTER TABLE runs_caseresult ADD COLUMN oloproof_search tsvector GENERATED ALWAYS AS (
         oloproof_case_result_search(output, error_type, error_message)) STORED""",
    """ALTER TABLE runs_datasetcase ADD COLUMN oloproof_search tsvector GENERATED ALWAYS AS (
         oloproof_dataset_case_search(input, expected)) STORED""",
    "CREATE INDEX case_result_search ON runs_caseresult USING gin (oloproof_search)",
    "CREATE INDEX dataset_case_search ON runs_datasetcase USING gin (oloproof_search)",
]
POSTGRES_BACKWARD = [
    "DROP INDEX IF EXISTS case_result_search",
    "DROP INDEX IF EXISTS dataset_case_search",
    "ALTER TABLE runs_caseresult DROP COLUMN IF EXISTS oloproof_search",
    "ALTER TABLE runs_datasetcase DROP COLUMN IF EXISTS oloproof_search",
    "DROP FUNCTION IF EXISTS oloproof_case_result_search(jsonb, text, text)",
    "DROP FUNCTION IF EXISTS oloproof_dataset_case_search(jsonb, jsonb)",
    "DROP FUNCTION IF EXISTS oloproof_json_words(jsonb)",
    "DROP FUNCTION IF EXISTS oloproof_search_words(text)",
]
STATEMENTS = {
    "sqlite": (SQLITE_FORWARD, SQLITE_BACKWARD),
    "postgresql": (POSTGRES_FORWARD, POSTGRES_BACKWARD),
}


def _run(schema_editor: Any, forward: bool) -> None:
    vendor = schema_editor.connection.vendor
    if vendor not in STATEMENTS:
        raise RuntimeError(f"oloproof's case search supports SQLite and PostgreSQL, not {vendor}")
    for statement in STATEMENTS[vendor][0 if forward else 1]:
        schema_editor.execute(statement)


def search_create(apps: Any, schema_editor: Any) -> None:
    _run(schema_editor, forward=True)


def search_drop(apps: Any, schema_editor: Any) -> None:
    _run(schema_editor, forward=False)


class Migration(migrations.Migration):
    dependencies = [("runs", "0008_case_annotations")]

    operations = [migrations.RunPython(search_create, search_drop, elidable=False)]
