"""Full-text search in a run's cases: which cases hold every word of a query.

The indexes are made by migration 0009 (SQLite: FTS5 tables kept in step by
triggers; PostgreSQL: GIN indexes over weighted `tsvector`s). Inputs and expected
values live in the dataset's rows, shared by every run of the dataset; outputs,
errors and case ids in the run's case results. A query is cut into words (runs of
letters and digits, as both indexes cut the text) and each word is matched as a
prefix; a case matches when every word is found in one of the chosen fields.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db import connection
from django.db.models import Q
from django.db.models.expressions import RawSQL

from runs.models import Run

SEARCH_FIELDS = ("input", "expected", "output", "error", "case_id")
MAX_WORDS = 8
"""Words of a query beyond this many are ignored (each costs one index lookup)."""

_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True, slots=True)
class _Index:
    """Where one table's words are indexed, and the field each column or weight holds."""

    sqlite_columns: dict[str, str]
    postgres_weights: dict[str, str]


_RESULTS = _Index(
    sqlite_columns={"case_id": "case_id", "output": "output", "error": "error"},
    postgres_weights={"output": "A", "error": "B", "case_id": "C"},
)
_DATASET_ROWS = _Index(
    sqlite_columns={"input": "input", "expected": "expected"},
    postgres_weights={"input": "A", "expected": "B"},
)

_SQL = {
    ("sqlite", "results"): (
        "SELECT rowid FROM runs_caseresult_search WHERE runs_caseresult_search MATCH %s"
    ),
    ("sqlite", "rows"): (
        "SELECT case_id FROM runs_datasetcase WHERE dataset_id = %s AND id IN "
        "(SELECT rowid FROM runs_datasetcase_search WHERE runs_datasetcase_search MATCH %s)"
    ),
    ("postgresql", "results"): (
        "SELECT id FROM runs_caseresult WHERE run_id = %s AND oloproof_case_result_search("
        "case_id, output, error_type, error_message) @@ to_tsquery('simple', %s)"
    ),
    ("postgresql", "rows"): (
        "SELECT case_id FROM runs_datasetcase WHERE dataset_id = %s AND "
        "oloproof_dataset_case_search(input, expected) @@ to_tsquery('simple', %s)"
    ),
}


def search_words(text: str) -> list[str]:
    """The words a query is matched by, lower-cased, at most MAX_WORDS."""
    return [word.lower() for word in _WORD.findall(text)][:MAX_WORDS]


def case_search_filter(*, run: Run, text: str, fields: tuple[str, ...] = SEARCH_FIELDS) -> Q:
    """A filter on the run's CaseResult rows: every word of `text` in one of `fields`.

    A query without any word matches nothing (rather than everything).
    """
    unknown = set(fields) - set(SEARCH_FIELDS)
    if unknown:
        raise ValueError(f"unknown search fields {sorted(unknown)}; known: {SEARCH_FIELDS}")
    words = search_words(text)
    if not words:
        return Q(pk__in=[])
    found = Q()
    for word in words:
        found &= _word_filter(run, word, fields)
    return found


def _word_filter(run: Run, word: str, fields: tuple[str, ...]) -> Q:
    vendor = connection.vendor
    if (vendor, "results") not in _SQL:
        raise RuntimeError(f"case search supports SQLite and PostgreSQL, not {vendor}")
    matched = Q(pk__in=[])
    result_query = _match(vendor, _RESULTS, word, fields)
    if result_query is not None:
        params = [result_query] if vendor == "sqlite" else [run.pk, result_query]
        matched |= Q(pk__in=RawSQL(_SQL[(vendor, "results")], params))
    row_query = _match(vendor, _DATASET_ROWS, word, fields)
    if row_query is not None and run.dataset_id is not None:
        matched |= Q(case_id__in=RawSQL(_SQL[(vendor, "rows")], [run.dataset_id, row_query]))
    return matched


def _match(vendor: str, index: _Index, word: str, fields: tuple[str, ...]) -> str | None:
    """The index's query for one word as a prefix in the chosen fields, or None."""
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
