"""Where a run comes from, kept in its provenance: runs made by tests are marked as such.

A run recorded while a pytest test runs (detected from pytest's own
`PYTEST_CURRENT_TEST`, or set by the oloproof pytest plugin with the test's marker)
carries `provenance["origin"] = {"kind": "test", "test": <node id>,
"queue_approval": False}`: the dashboard lists it, but its gate does not wait for a
person's approval unless the test asks (`@pytest.mark.oloproof(queue_approval=True)`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_test_origin: ContextVar[dict[str, Any] | None] = ContextVar("oloproof_test_origin", default=None)


@contextmanager
def origin_of_test(*, test: str, queue_approval: bool = False) -> Iterator[None]:
    """Mark the runs recorded inside the block as made by the test `test`."""
    token = _test_origin.set({"kind": "test", "test": test, "queue_approval": queue_approval})
    try:
        yield
    finally:
        _test_origin.reset(token)


def run_origin() -> dict[str, Any] | None:
    """The origin to record with a run made now, or None for an ordinary run."""
    explicit = _test_origin.get()
    if explicit is not None:
        return dict(explicit)
    current = os.environ.get("PYTEST_CURRENT_TEST")
    if current:
        # "tests/test_x.py::test_y (call)": the node id, then the phase.
        return {"kind": "test", "test": current.rsplit(" (", 1)[0], "queue_approval": False}
    return None
