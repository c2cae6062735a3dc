"""Full-text search over a run's cases: input and expected (dataset rows), output and error.

SQLite: two contentless FTS5 tables kept in step with their tables by triggers, so the
one writer of those tables (runs.recording) keeps writing plain rows. PostgreSQL: one
weighted `tsvector` expression index (GIN) per table, through immutable functions that
the queries call too (runs/case_search.py), so the planner uses the index.

Both index the values of JSON documents (not their keys), split into runs of letters
and digits, the first 50,000 characters of each field.
"""

from typing import Any

from django.db import migrations

SQLITE_JSON_WORDS = (
    "(SELECT substr(group_concat(atom, ' '), 1, 50000) FROM json_tree({doc}) "
    "WHERE type IN ('text', 'integer', 'real'))"
)


def _json_words(doc: str) -> str:
    return SQLITE_JSON_WORDS.format(doc=doc)


def _result_values(row: str) -> str:
    return (
        f"{row}.id, {_json_words(row + '.output')}, "
        f"substr({row}.error_type || ' ' || {row}.error_message, 1, 50000)"
    )


def _dataset_values(row: str) -> str:
    return f"{row}.id, {_json_words(row + '.input')}, {_json_words(row + '.expected')}"


_RESULT_COLUMNS = "output, error"
_DATASET_COLUMNS = "input, expected"
_FTS_OPTIONS = "content='', tokenize='unicode61 remove_diacritics 0'"


def _sqlite_table(name: str, table: str, columns: str, values: Any) -> list[str]:
    fts = f"{table}_search"
    delete = f"INSERT INTO {fts}({fts}, rowid, {columns}) VALUES ('delete', {values('old')});"
    insert = f"INSERT INTO {fts}(rowid, {columns}) VALUES ({values('new')});"
    watched = "output, error_type, error_message" if name == "result" else "input, expected"
    return [
        f"CREATE VIRTUAL TABLE {fts} USING fts5({columns}, {_FTS_OPTIONS})",
        f"CREATE TRIGGER {fts}_insert AFTER INSERT ON {table} BEGIN {insert} END",
        f"CREATE TRIGGER {fts}_delete AFTER DELETE ON {table} BEGIN {delete} END",
        f"CREATE TRIGGER {fts}_update AFTER UPDATE OF {watched} ON {table} "
        f"BEGIN {delete} {insert} END",
        f"INSERT INTO {fts}(rowid, {columns}) SELECT {values('existing')} "
        f"FROM {table} AS existing",
    ]


SQLITE_FORWARD = [
    *_sqlite_table("result", "runs_caseresult", _RESULT_COLUMNS, _result_values),
    *_sqlite_table("dataset", "runs_datasetcase", _DATASET_COLUMNS, _dataset_values),
]
SQLITE_BACKWARD = [
    f"DROP {kind} IF EXISTS {table}_search{suffix}"
    for table in ("runs_caseresult", "runs_datasetcase")
    for kind, suffix in (
        ("TRIGGER", "_insert"),
        ("TRIGGER", "_delete"),
        ("TRIGGER", "_update"),
        ("TABLE", ""),
    )
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
    """CREATE INDEX case_result_search ON runs_caseresult USING gin (
         oloproof_case_result_search(output, error_type, error_message))""",
    """CREATE INDEX dataset_case_search ON runs_datasetcase USING gin (
         oloproof_dataset_case_search(input, expected))""",
]
POSTGRES_BACKWARD = [
    "DROP INDEX IF EXISTS case_result_search",
    "DROP INDEX IF EXISTS dataset_case_search",
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
