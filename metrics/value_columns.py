"""The stored layout of a run's value columns (`RunValueColumns`), both ways.

Case ids as a JSON list, every metric's values as little-endian float64 one column
after another, clusters as little-endian int32 codes into a JSON list of labels, the
reading order as little-endian int32 indices: a
100,000-case run reads back in a few milliseconds, with no per-case Python work but
the ids' JSON. Writing needs no NumPy (the store's process records a pass/fail run
without loading it); reading, for comparisons, makes arrays of the columns.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import oloproof_core as engine
from oloproof_core.results.compare import column_lists
from oloproof_core.stats import digest_order

if TYPE_CHECKING:
    from oloproof_core.results.compare import ValueColumns


def value_columns_encode(result: engine.Result) -> dict[str, Any]:
    """`result`'s value columns as the fields of a `RunValueColumns` row.

    The reading order is kept with them: hashing 100,000 ids would otherwise cost
    each comparison.
    """
    if isinstance(result.cases, engine.CaseColumns):
        return _columns_encode(result.cases, result.metrics)
    columns = column_lists(result)
    names = list(columns.values)
    values = [value for name in names for value in columns.values[name]]
    codes, labels = columns.cluster_codes, columns.cluster_labels
    return {
        "case_ids": json.dumps(columns.ids, ensure_ascii=False),
        "metrics": names,
        "values": _packed("d", values),
        "cluster_codes": None if codes is None else _packed("i", codes),
        "cluster_labels": None if codes is None else list(labels or ()),
        "read_order": _packed("i", digest_order(columns.ids)),
    }


def _columns_encode(
    cases: engine.CaseColumns, metrics: Sequence[engine.MetricEstimate]
) -> dict[str, Any]:
    """The fields from a conclusion's columns (a worker's run): the arrays' own bytes,
    with no per-value Python float, so a million-case run's columns cost their size.

    `case_ids` is None when the ids are the store's (`engine.DeferredIds`): the writer
    has the database fill them in.
    """
    import numpy as np

    from oloproof_core.stats import ReadOrder

    if isinstance(cases, engine.SpilledColumns) and not cases.clustered:
        parted = _spilled_encode(cases, metrics)
        if parted is not None:
            return parted
    codes, labels = cases.cluster_codes, cases.cluster_labels
    if codes is not None and "" in labels:  # an empty label is no cluster: the lists know
        return value_columns_encode(_cases_result(cases, metrics))
    columns = [cases.metric_column(metric) for metric in metrics]
    in_store = isinstance(cases.ids, engine.DeferredIds)
    order = ReadOrder.of(cases.ids) if cases.read_order is None else cases.read_order
    return {
        "case_ids": None if in_store else json.dumps(list(cases.ids), ensure_ascii=False),
        "metrics": [metric.metric for metric in metrics],
        "values": _buffer(columns[0] if len(columns) == 1 else np.concatenate(columns), "<f8"),
        "cluster_codes": None if codes is None else codes.astype("<i4").tobytes(),
        "cluster_labels": None if codes is None else list(labels),
        "read_order": _buffer(order.indices, "<i4"),
    }


@dataclass(frozen=True, slots=True)
class BlobParts:
    """A byte column too large to hold: its length and its bytes in parts, which the
    store writes one after another (`bulk_rows.large_bytes_write`)."""

    total: int
    parts: Iterator[bytes]


def _spilled_encode(
    cases: engine.SpilledColumns, metrics: Sequence[engine.MetricEstimate]
) -> dict[str, Any] | None:
    """The fields from columns kept in files, the byte columns in parts: None if the
    store did not read the reading order (the columns are then read whole)."""
    order = cases.read_order_parts()
    if order is None or not isinstance(cases.ids, engine.DeferredIds):
        return None
    return {
        "case_ids": None,
        "metrics": [metric.metric for metric in metrics],
        "values": BlobParts(*cases.value_parts([metric.metric for metric in metrics])),
        "cluster_codes": None,
        "cluster_labels": None,
        "read_order": BlobParts(*order),
    }


def _buffer(column: Any, kind: str) -> memoryview:
    """The column's bytes as `kind` (e.g. little-endian float64), handed to the driver
    without a copy where the column is already stored that way."""
    return column.astype(kind, copy=False).data.cast("B")


def _cases_result(
    cases: engine.CaseColumns, metrics: Sequence[engine.MetricEstimate]
) -> engine.Result:
    return engine.Result(metrics=list(metrics), cases=list(cases), provenance={})


def _packed(kind: str, numbers: Sequence[float]) -> bytes:
    """`numbers` little-endian, `kind` "d" (float64) or "i" (int32)."""
    return struct.pack(f"<{len(numbers)}{kind}", *numbers)


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
    import numpy as np  # here, not above: recording a run writes columns and never reads them

    from oloproof_core.results.compare import ValueColumns
    from oloproof_core.stats import ReadOrder

    float_type, code_type = np.dtype("<f8"), np.dtype("<i4")
    parsed = json.loads(case_ids) if ids is None else ids
    table = np.frombuffer(bytes(values), float_type).reshape(len(metrics), len(parsed))
    by_metric = {name: table[row].astype(np.float64) for row, name in enumerate(metrics)}
    order = None if read_order is None else ReadOrder(np.frombuffer(bytes(read_order), code_type))
    if cluster_codes is None or cluster_labels is None:
        return ValueColumns(parsed, by_metric, read_order=order)
    codes = np.frombuffer(bytes(cluster_codes), code_type).astype(np.intp)
    return ValueColumns(parsed, by_metric, codes, list(cluster_labels), order)
