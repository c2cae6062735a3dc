"""Full-text search in a run's cases: which cases hold every word of a query.

The indexes are made by migration 0009 (SQLite: FTS5 tables kept in step by
triggers; PostgreSQL: GIN indexes over weighted `tsvector`s). Inputs and expected
values live in the dataset's rows, shared by every run of the dataset; outputs and
errors in the run's case results. A query is cut into words (runs of letters and
digits, as both indexes cut the text) and each word is matched as the start of a
word; a case matches when every word is in one of the chosen fields. A case id
matches when it starts with the query as typed (through the (run, case id) index).

Cost: one index lookup per word and table, bounded to the run's own rows (SQLite:
the run's and the dataset's id ranges, which FTS5 seeks to; PostgreSQL: the GIN
bitmap and the run's index), then an intersection of the words' sets. It grows with
the number of matching cases, never with the number of runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Q
from django.db.models.expressions import RawSQL

from runs.models import CaseResult, DatasetCase, Run

SEARCH_FIELDS = ("input", "expected", "output", "error", "case_id")
MAX_WORDS = 8
"""Words of a query beyond this many are ignored (each costs one index lookup)."""
_LAST_CHARACTER = "\U0010ffff"

_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True, slots=True)
class _Index:
    """Where one table's words are indexed, and the field each column or weight holds."""

    sqlite_columns: dict[str, str]
    postgres_weights: dict[str, str]


_RESULTS = _Index(
    sqlite_columns={"output": "output", "error": "error"},
    postgres_weights={"output": "A", "error": "B"},
)
_DATASET_ROWS = _Index(
    sqlite_columns={"input": "input", "expected": "expected"},
    postgres_weights={"input": "A", "expected": "B"},
)

_WORD_SQL = {
    # The ids of the run's case results matching one word, per table and database.
    ("sqlite", "results"): (
        "SELECT rowid AS id FROM runs_caseresult_search "
        "WHERE runs_caseresult_search MATCH %s AND rowid BETWEEN %s AND %s"
    ),
    ("sqlite", "rows"): (
        "SELECT result.id AS id FROM (SELECT rowid AS row_id FROM runs_datasetcase_search "
        "WHERE runs_datasetcase_search MATCH %s AND rowid BETWEEN %s AND %s) AS hit "
        "JOIN runs_datasetcase AS row ON row.id = hit.row_id AND row.dataset_id = %s "
        "JOIN runs_caseresult AS result ON result.run_id = %s AND result.case_id = row.case_id"
    ),
    ("postgresql", "results"): (
        "SELECT id FROM runs_caseresult WHERE run_id = %s AND oloproof_case_result_search("
        "output, error_type, error_message) @@ to_tsquery('simple', %s)"
    ),
    ("postgresql", "rows"): (
        "SELECT result.id AS id FROM runs_datasetcase AS row JOIN runs_caseresult AS result "
        "ON result.run_id = %s AND result.case_id = row.case_id WHERE row.dataset_id = %s "
        "AND oloproof_dataset_case_search(row.input, row.expected) @@ to_tsquery('simple', %s)"
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
    if (vendor, "results") not in _WORD_SQL:
        raise RuntimeError(f"case search supports SQLite and PostgreSQL, not {vendor}")
    found = Q(pk__in=[])
    typed = text.strip()
    if "case_id" in fields and typed:
        found |= Q(case_id__gte=typed, case_id__lt=typed + _LAST_CHARACTER)
    words = search_words(text)
    text_fields = tuple(field for field in fields if field != "case_id")
    if words and text_fields:
        found |= Q(pk__in=RawSQL(*_matching_ids(vendor, run, words, text_fields)))
    return found


def _matching_ids(
    vendor: str, run: Run, words: list[str], fields: tuple[str, ...]
) -> tuple[str, list[Any]]:
    """SQL for the ids holding every word: each word's set (all tables), intersected."""
    bounds = _id_bounds(run) if vendor == "sqlite" else None
    selects, params = [], []
    for number, word in enumerate(words):
        parts = []
        for table, index in (("results", _RESULTS), ("rows", _DATASET_ROWS)):
            query = _match(vendor, index, word, fields)
            if query is None or (table == "rows" and run.dataset_id is None):
                continue
            parts.append(_WORD_SQL[(vendor, table)])
            params += _word_params(vendor, table, run, query, bounds)
        union = " UNION ALL ".join(parts) or "SELECT NULL AS id WHERE 1 = 0"
        selects.append(f"SELECT id FROM ({union}) AS word_{number}")
    return " INTERSECT ".join(selects), params


def _word_params(
    vendor: str, table: str, run: Run, query: str, bounds: dict[str, tuple[int, int]] | None
) -> list[Any]:
    if vendor != "sqlite":
        return [run.pk, query] if table == "results" else [run.pk, run.dataset_id, query]
    assert bounds is not None
    if table == "results":
        return [query, *bounds["results"]]
    return [query, *bounds["rows"], run.dataset_id, run.pk]


def _id_bounds(run: Run) -> dict[str, tuple[int, int]]:
    """The id ranges of the run's case results and its dataset's rows.

    FTS5 seeks straight to a rowid range, so each word is read for this run's rows
    only, however many other runs share the index.
    """
    return {
        "results": _bounds(CaseResult.objects.filter(run=run).values_list("id", flat=True)),
        "rows": _bounds(
            DatasetCase.objects.filter(dataset_id=run.dataset_id).values_list("id", flat=True)
        ),
    }


def _bounds(ids: Any) -> tuple[int, int]:
    # Two single-ended reads: each is one step down the foreign key's index, where one
    # query asking for both MIN and MAX would read the whole range.
    low, high = ids.order_by("id").first(), ids.order_by("-id").first()
    return (0, -1) if low is None or high is None else (low, high)


def _match(vendor: str, index: _Index, word: str, fields: tuple[str, ...]) -> str | None:
    """The index's query for one word as a word start in the chosen fields, or None."""
    if vendor == "sqlite":
        columns = [index.sqlite_columns[field] for field in fields if field in index.sqlite_columns]
        if not columns:
            return None
        # A word holds only letters and digits, so quoting it leaves no FTS5 syntax in it.
        return "{" + " ".join(columns) + '} : "' + word + '"*'
    weights = "".join(index.postgres_weights[f] for f in fields if f in index.postgres_weights)
    if not weights:
        return None
    return f"'{word}':*{weights}"
