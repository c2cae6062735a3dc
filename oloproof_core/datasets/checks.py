"""The dataset rows' limits: what every supported database can store, checked at load time.

Called by the loader (`oloproof_core.datasets.dataset`) for each row once its shape is known,
so a row PostgreSQL would refuse is a clear error naming the file and line, with exit
3, instead of a database error when the run is recorded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof_core._util.limits import label_problem, value_problem
from oloproof_core.errors import DatasetError

if TYPE_CHECKING:
    from oloproof_core.datasets.rows import Row


def check_row_limits(source: str, line: int | None, row: Row) -> None:
    """A DatasetError naming the file, the line and the key if the row cannot be stored."""
    problem = label_problem(row.id, "case id")
    if problem:
        raise DatasetError(source, line, f"'id' {problem}")
    for key in ("split", "cluster"):
        value = getattr(row, key)
        if value is not None:
            problem = label_problem(value, key)
            if problem:
                raise DatasetError(source, line, f"'{key}' of row {row.id!r} {problem}")
    for key in ("input", "expected"):
        problem = value_problem(getattr(row, key), key)
        if problem:
            raise DatasetError(source, line, f"row {row.id!r}: {problem}")


def json_constant_refused(name: str) -> None:
    """`parse_constant` for the JSON readers: NaN and Infinity are not JSON numbers."""
    raise ValueError(f"{name} is not a JSON number (NaN and Infinity cannot be stored)")
