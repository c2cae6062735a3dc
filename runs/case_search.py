"""Full-text search in a run's cases: which cases hold every word of a query.

The indexes are made by migration 0009. SQLite: one FTS5 row per case result, holding
its dataset row's input and expected value beside its output and error (triggers keep
it in step), so one FTS5 query, bounded to the run's id range, answers a whole query.
PostgreSQL: GIN indexes over stored, weighted `tsvector` columns of the dataset rows and
of the case results; each word's ids are read from both and the words' sets intersected.

A query is cut into words (runs of letters and digits, as both indexes cut the text)
and each word is matched as the start of a word; a case matches when every word is in
one of the chosen fields. A case id matches when it starts with the query as typed
(through the (run, case id) index). The cost grows with the cases a query matches in
the run, not with the number of runs in the store.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import BooleanField, ExpressionWrapper, Q
from django.db.models.expressions import RawSQL

from runs.models import CaseResult, Run

SEARCH_FIELDS = ("input", "expected", "output", "error", "case_id")
MAX_WORDS = 8
"""Words of a query beyond this many are ignored (each costs one index lookup)."""
_LAST_CHARACTER = "\U0010ffff"
_OUTER = '"runs_caseresult"'
"""The case results table as Django's queries name it (the PostgreSQL filter refers to it)."""

_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True, slots=True)
class _Index:
    """PostgreSQL: the weight that tells which field of a table's tsvector a word is in."""

    postgres_weights: dict[str, str]


_SQLITE_COLUMNS = ("input", "expected", "output", "error")
"""SQLite: one FTS5 row per case result, its dataset row's words beside its own."""
_RESULTS = _Index(postgres_weights={"output": "A", "error": "B"})
_DATASET_ROWS = _Index(postgres_weights={"input": "A", "expected": "B"})

_CASE_ID_SQL = "SELECT id FROM runs_caseresult WHERE run_id = %s AND case_id >= %s AND case_id < %s"
_SQLITE_SQL = (
    "SELECT rowid AS id FROM runs_caseresult_search "
    "WHERE runs_caseresult_search MATCH %s AND rowid BETWEEN %s AND %s"
)
_POSTGRES_SQL = {
    # The ids of the run's case results matching one word, per table.
    "results": (
        "SELECT id FROM runs_caseresult WHERE run_id = %s "
        "AND oloproof_search @@ to_tsquery('simple', %s)"
    ),
    "rows": (
        "SELECT result.id AS id FROM runs_datasetcase AS row JOIN runs_caseresult AS result "
        "ON result.run_id = %s AND result.case_id = row.case_id WHERE row.dataset_id = %s "
        "AND row.oloproof_search @@ to_tsquery('simple', %s)"
    ),
}


def search_words(text: str) -> list[str]:
    """The words a query is matched by, lower-cased, at most MAX_WORDS."""
    return [word.lower() for word in _WORD.findall(text)][:MAX_WORDS]


def case_search_filter(*, run: Run, text: str, fields: tuple[str, ...] = SEARCH_FIELDS) -> Q:
    """A filter on the run's CaseResult rows: every word of `text` in one of `fields`
    (or, with "case_id" among them, an id starting with `text`).

    A query without any word matches no text (rather than everything).
    """
    unknown = set(fields) - set(SEARCH_FIELDS)
    if unknown:
        raise ValueError(f"unknown search fields {sorted(unknown)}; known: {SEARCH_FIELDS}")
    vendor = connection.vendor
    if vendor not in ("sqlite", "postgresql"):
        raise RuntimeError(f"case search supports SQLite and PostgreSQL, not {vendor}")
    selects, params = [], []
    typed = text.strip()
    if "case_id" in fields and typed:
        selects.append(_CASE_ID_SQL)
        params += [run.pk, typed, typed + _LAST_CHARACTER]
    words = search_words(text)
    text_fields = tuple(field for field in fields if field != "case_id")
    if words and text_fields:
        matching = _sqlite_ids if vendor == "sqlite" else _postgres_ids
        sql, word_params = matching(run, words, text_fields)
        selects.append(f"SELECT id FROM ({sql}) AS words")
        params += word_params
    if not selects:
        return Q(pk__in=[])
    # One set of ids, so the database starts from the (few) matches rather than testing
    # every case of the run against an OR.
    union = " UNION ".join(selects)
    if vendor == "sqlite":
        return Q(pk__in=RawSQL(union, params))
    # PostgreSQL cannot estimate how many cases a word start matches and, guessing
    # thousands, would read the whole table to join them; as an array, the ids are
    # computed first and then looked up by primary key.
    in_array = RawSQL(f"{_OUTER}.id = ANY(ARRAY({union}))", params)
    return Q(ExpressionWrapper(in_array, output_field=BooleanField()))


def _sqlite_ids(run: Run, words: list[str], fields: tuple[str, ...]) -> tuple[str, list[Any]]:
    """One FTS5 query: every word (as a word start) in one of the fields, the run's rows."""
    columns = "{" + " ".join(field for field in _SQLITE_COLUMNS if field in fields) + "}"
    # A word holds only letters and digits, so quoting it leaves no FTS5 syntax in it.
    query = " AND ".join(f'{columns} : "{word}"*' for word in words)
    return _SQLITE_SQL, [query, *_id_bounds(run)]


def _postgres_ids(run: Run, words: list[str], fields: tuple[str, ...]) -> tuple[str, list[Any]]:
    """Each word's ids (both tables, through their GIN indexes), intersected."""
    selects, params = [], []
    for number, word in enumerate(words):
        parts = []
        for table, index in (("results", _RESULTS), ("rows", _DATASET_ROWS)):
            weights = "".join(index.postgres_weights.get(field, "") for field in fields)
            if not weights or (table == "rows" and run.dataset_id is None):
                continue
            parts.append(_POSTGRES_SQL[table])
            dataset = [] if table == "results" else [run.dataset_id]
            params += [run.pk, *dataset, f"'{word}':*{weights}"]
        union = " UNION ALL ".join(parts) or "SELECT NULL AS id WHERE 1 = 0"
        selects.append(f"SELECT id FROM ({union}) AS word_{number}")
    return " INTERSECT ".join(selects), params


def _id_bounds(run: Run) -> tuple[int, int]:
    """The id range of the run's case results: FTS5 seeks straight to it, so a word is
    read for this run's rows only, however many other runs share the index."""
    ids = CaseResult.objects.filter(run=run).values_list("id", flat=True)
    # Two single-ended reads, each one step down the foreign key's index (one query asking
    # for both MIN and MAX would read the whole range).
    low, high = ids.order_by("id").first(), ids.order_by("-id").first()
    return (0, -1) if low is None or high is None else (low, high)
