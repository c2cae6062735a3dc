"""Full-text search in a run's cases: which cases hold every word of a query.

The indexes are made by migration 0009. SQLite: one FTS5 row per case result, holding
its dataset row's input and expected value beside its output and error (triggers keep
it in step), so one FTS5 query, bounded to the run's id range, answers a whole query.
PostgreSQL: stored, weighted `tsvector` columns on the case results and the dataset
rows, with GIN indexes, which give each word's ids; a search with many matches becomes
a condition on each of the run's rows instead (`_postgres_filter`).

A query is cut into words (runs of letters and digits, as both indexes cut the text)
and each word is matched as the start of a word; a case matches when every word is in
one of the chosen fields. A case id matches when it starts with the query as typed
(through the (run, case id) index). The cost is bounded by the run's own cases, not by
the number of runs in the store.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import BooleanField, ExpressionWrapper, Q
from django.db.models.expressions import RawSQL

from runs.models import CaseResult, Run
from runs.selectors.keyset import few_rows

SEARCH_FIELDS = ("input", "expected", "output", "error", "case_id")
MAX_WORDS = 8
"""Words of a query beyond this many are ignored (each costs one index lookup)."""
_LAST_CHARACTER = "\U0010ffff"
_OUTER = '"runs_caseresult"'
"""The case results table as Django's queries name it (the PostgreSQL filter refers to it)."""

_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True, slots=True)
class _Index:
    """PostgreSQL: one table's weighted tsvector (a weight tells which field a word is
    in), and the two ways a word is looked for in it."""

    postgres_weights: dict[str, str]
    ids: str
    """The ids of the run's case results matching one word (through the GIN index)."""
    row_condition: str
    """The same as a condition on the case result's own row."""
    of_dataset: bool


_SQLITE_COLUMNS = ("input", "expected", "output", "error")
"""SQLite: one FTS5 row per case result, its dataset row's words beside its own."""
_RESULTS = _Index(
    postgres_weights={"output": "A", "error": "B"},
    ids=(
        "SELECT id FROM runs_caseresult WHERE run_id = %s "
        "AND oloproof_search @@ to_tsquery('simple', %s)"
    ),
    row_condition=f"{_OUTER}.oloproof_search @@ to_tsquery('simple', %s)",
    of_dataset=False,
)
_DATASET_ROWS = _Index(
    postgres_weights={"input": "A", "expected": "B"},
    # `dataset_id + 0`: the rows come from the word's GIN index alone, tested for their
    # dataset one by one. PostgreSQL expects a prefix query to match 2 % of the rows and,
    # to narrow that, read the dataset's own index too: all its million entries, 210 ms
    # of a search that finds one case.
    ids=(
        "SELECT result.id AS id FROM runs_datasetcase AS row JOIN runs_caseresult AS result "
        "ON result.run_id = %s AND result.case_id = row.case_id WHERE row.dataset_id + 0 = %s "
        "AND row.oloproof_search @@ to_tsquery('simple', %s)"
    ),
    # The case's own dataset row's words, read through its unique index: a page that
    # stops after fifty matches reads fifty-odd rows. (As IN or EXISTS, PostgreSQL would
    # first hash every match of the word in the dataset: 143,000 rows, 0.6 s, for a word
    # in one case of seven of a million.)
    row_condition=(
        "(SELECT row.oloproof_search FROM runs_datasetcase AS row WHERE row.dataset_id = %s "
        f"AND row.case_id = {_OUTER}.case_id) @@ to_tsquery('simple', %s)"
    ),
    of_dataset=True,
)

_CASE_ID_RANGE = (
    "SELECT id FROM runs_caseresult WHERE run_id = %s AND case_id >= %s AND case_id < %s"
)
_POSTGRES_CASE_ID = f"{_OUTER}.case_id >= %s AND {_OUTER}.case_id < %s"
_SQLITE_SQL = (
    "SELECT rowid AS id FROM runs_caseresult_search "
    "WHERE runs_caseresult_search MATCH %s AND rowid BETWEEN %s AND %s"
)
FEW_MATCHES = 20_000
"""PostgreSQL: a search with at most this many matches reads them by id; with more, the
run's rows are tested in order instead (see `_postgres_filter`)."""


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
    typed = text.strip()
    words = search_words(text)
    text_fields = tuple(field for field in fields if field != "case_id")
    by_id = "case_id" in fields and bool(typed)
    by_words = bool(words and text_fields)
    if vendor == "postgresql":
        return _postgres_filter(run, typed if by_id else "", words if by_words else [], text_fields)
    selects, params = [], []
    if by_id:
        selects.append(_CASE_ID_RANGE)
        params += [run.pk, typed, typed + _LAST_CHARACTER]
    if by_words:
        sql, word_params = _sqlite_ids(run, words, text_fields)
        selects.append(f"SELECT id FROM ({sql}) AS words")
        params += word_params
    if not selects:
        return Q(pk__in=[])
    # One set of ids, so SQLite starts from the (few) matches rather than testing every
    # case of the run against an OR.
    return Q(pk__in=RawSQL(" UNION ".join(selects), params))


def _sqlite_ids(run: Run, words: list[str], fields: tuple[str, ...]) -> tuple[str, list[Any]]:
    """One FTS5 query: every word (as a word start) in one of the fields, the run's rows."""
    columns = "{" + " ".join(field for field in _SQLITE_COLUMNS if field in fields) + "}"
    # A word holds only letters and digits, so quoting it leaves no FTS5 syntax in it.
    query = " AND ".join(f'{columns} : "{word}"*' for word in words)
    return _SQLITE_SQL, [query, *_id_bounds(run)]


def _postgres_filter(run: Run, typed: str, words: list[str], fields: tuple[str, ...]) -> Q:
    """The run's cases whose id starts with `typed` or that hold every word.

    Each word's matches come from the GIN indexes, read until FEW_MATCHES + 1 of them
    (no sorting or deduplication, so the read stops there). Every match holds the rarest
    word, so when some word has few matches, the search is those cases, each tested for
    the other words. When every word is common, the search becomes a condition on each
    row itself, which PostgreSQL tests over the run's rows in position order: a page
    stops after a few rows and a count reads the run's rows once, never another run's.
    """
    indexes = _indexes_searched(run, fields)
    with few_rows():
        common = bool(words) and _common_in_first_rows(run, words, indexes)
        found = [] if common else _words_ids(run, words, indexes)
    rarest = min(range(len(found)), key=lambda number: len(found[number]), default=None)
    rare = None
    if rarest is not None and len(found[rarest]) <= FEW_MATCHES:
        rare = found[rarest]
        words = [words[rarest], *words[:rarest], *words[rarest + 1 :]]
    alternatives: list[str] = []
    params: list[Any] = []
    if typed:
        alternatives.append(_POSTGRES_CASE_ID)
        params += [typed, typed + _LAST_CHARACTER]
    if words and rare is None:
        sql, word_params = _postgres_row_conditions(run, words, indexes)
        alternatives.append(sql)
        params += word_params
    elif words and rare:
        sql, word_params = _postgres_row_conditions(run, words[1:], indexes)
        alternatives.append(f"{_OUTER}.id = ANY(%s)" + (f" AND {sql}" if sql else ""))
        params += [rare, *word_params]
    if not alternatives:
        return Q(pk__in=[])
    either = RawSQL(" OR ".join(f"({part})" for part in alternatives), params)
    return Q(ExpressionWrapper(either, output_field=BooleanField()))


SAMPLE_ROWS = 1_000
COMMON_IN_SAMPLE = 50
"""A search matching this many of the run's first SAMPLE_ROWS cases (5 %) is common."""


def _common_in_first_rows(run: Run, words: list[str], indexes: list[tuple[_Index, str]]) -> bool:
    """Whether the search matches many of the run's first cases: then a page and its
    count stop within a few thousand rows, and reading the matches' ids from the GIN
    indexes would cost more (a word's whole posting list, every run's: 70 ms for a word
    in one case of seven of two million)."""
    if not indexes:
        return False
    sql, params = _postgres_row_conditions(run, words, indexes)
    first = (
        "SELECT id, case_id, oloproof_search FROM runs_caseresult WHERE run_id = %s "
        "ORDER BY position LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id FROM ({first}) AS {_OUTER} WHERE {sql}",
            [run.pk, SAMPLE_ROWS, *params],
        )
        return len(cursor.fetchall()) >= COMMON_IN_SAMPLE


def _words_ids(run: Run, words: list[str], indexes: list[tuple[_Index, str]]) -> list[list[int]]:
    """For each word, ids of the run's cases holding it in the searched fields, at most
    FEW_MATCHES + 1 (a case may be listed twice: once per table it matches in); one
    query, each word's part read only as far as its limit."""
    if not indexes or not words:
        return [[] for _ in words]
    union = " UNION ALL ".join(index.ids for index, _ in indexes)
    parts, params = [], []
    for number, word in enumerate(words):
        parts.append(f"(SELECT {number} AS word, id FROM ({union}) AS w{number} LIMIT %s)")
        for index, weights in indexes:
            params += [run.pk, *_dataset_of(run, index), f"'{word}':*{weights}"]
        params.append(FEW_MATCHES + 1)
    found: list[list[int]] = [[] for _ in words]
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(parts), params)
        for number, case_result_id in cursor.fetchall():
            found[number].append(case_result_id)
    return found


def _postgres_row_conditions(
    run: Run, words: list[str], indexes: list[tuple[_Index, str]]
) -> tuple[str, list[Any]]:
    """Every word as a condition on the case result's own row: in its output and error
    (its `tsvector`) or in its dataset row's (a probe of that row). Empty: no words."""
    every_word = []
    params: list[Any] = []
    for word in words:
        places = " OR ".join(index.row_condition for index, _ in indexes)
        for index, weights in indexes:
            params += [*_dataset_of(run, index), f"'{word}':*{weights}"]
        every_word.append(f"({places or 'FALSE'})")
    return " AND ".join(every_word), params


def _indexes_searched(run: Run, fields: tuple[str, ...]) -> list[tuple[_Index, str]]:
    """The PostgreSQL tables a search in `fields` reads, each with the weights of those
    fields (the dataset rows only when the run has a dataset)."""
    searched = []
    for index in (_RESULTS, _DATASET_ROWS):
        weights = "".join(index.postgres_weights.get(field, "") for field in fields)
        if weights and not (index.of_dataset and run.dataset_id is None):
            searched.append((index, weights))
    return searched


def _dataset_of(run: Run, index: _Index) -> list[Any]:
    return [run.dataset_id] if index.of_dataset else []


def _id_bounds(run: Run) -> tuple[int, int]:
    """The id range of the run's case results: FTS5 seeks straight to it, so a word is
    read for this run's rows only, however many other runs share the index."""
    ids = CaseResult.objects.filter(run=run).values_list("id", flat=True)
    # Two single-ended reads, each one step down the foreign key's index (one query asking
    # for both MIN and MAX would read the whole range).
    low, high = ids.order_by("id").first(), ids.order_by("-id").first()
    return (0, -1) if low is None or high is None else (low, high)
