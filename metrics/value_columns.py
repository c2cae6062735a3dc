"""The stored layout of a run's value columns (`RunValueColumns`), both ways.

Case ids as a JSON list, every metric's values as little-endian float64 one column
after another, clusters as little-endian int32 codes into a JSON list of labels, the
reading order as little-endian int32 indices: a
100,000-case run reads back in a few milliseconds, with no per-case Python work but
the ids' JSON.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from oloproof_core.compare import ValueColumns
from oloproof_core.stats import ReadOrder

_FLOAT = np.dtype("<f8")
_CODE = np.dtype("<i4")


def value_columns_encode(columns: ValueColumns) -> dict[str, Any]:
    """`columns` as the fields of a `RunValueColumns` row."""
    names = list(columns.values)
    n = len(columns.ids)
    values = np.empty((len(names), n), _FLOAT)
    for row, name in enumerate(names):
        values[row] = columns.values[name]
    codes, order = columns.cluster_codes, columns.read_order
    return {
        "case_ids": json.dumps(columns.ids, ensure_ascii=False),
        "metrics": names,
        "values": values.tobytes(),
        "cluster_codes": None if codes is None else np.asarray(codes, _CODE).tobytes(),
        "cluster_labels": None if codes is None else list(columns.cluster_labels or ()),
        "read_order": None if order is None else np.asarray(order.indices, _CODE).tobytes(),
    }


def value_columns_decode(
    *,
    case_ids: str,
    metrics: list[str],
    values: bytes | memoryview,
    cluster_codes: bytes | memoryview | None,
    cluster_labels: list[str] | None,
    read_order: bytes | memoryview | None,
    ids: list[str] | None = None,
) -> ValueColumns:
    """The row's fields back as columns; `ids`, when given, are the already parsed `case_ids`."""
    parsed = json.loads(case_ids) if ids is None else ids
    table = np.frombuffer(bytes(values), _FLOAT).reshape(len(metrics), len(parsed))
    by_metric = {name: table[row].astype(np.float64) for row, name in enumerate(metrics)}
    order = None if read_order is None else ReadOrder(np.frombuffer(bytes(read_order), _CODE))
    if cluster_codes is None or cluster_labels is None:
        return ValueColumns(parsed, by_metric, read_order=order)
    codes = np.frombuffer(bytes(cluster_codes), _CODE).astype(np.intp)
    return ValueColumns(parsed, by_metric, codes, list(cluster_labels), order)
