"""The oloproof pytest plugin (registered through the `pytest11` entry point).

- the `assert_gate` fixture: `oloproof.testing.assert_gate`, which asserts a run's
  gate and prints its readout;
- runs recorded during a test are marked with the test's node id (their provenance's
  `origin`), and their gates do not wait for approval on the dashboard unless the
  test is marked `@pytest.mark.oloproof(queue_approval=True)`.

Importing this module costs nothing: it loads oloproof only when a test runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "oloproof(queue_approval=False): runs recorded by this test; queue_approval=True "
        "lets their gates wait for a person's approval on the dashboard",
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[Any]:
    from oloproof._origin import origin_of_test

    marker = item.get_closest_marker("oloproof")
    queue = bool(marker.kwargs.get("queue_approval", False)) if marker is not None else False
    with origin_of_test(test=item.nodeid, queue_approval=queue):
        return (yield)


@pytest.fixture
def assert_gate() -> Callable[..., Any]:
    """Assert a run's gate passed and print its readout: `assert_gate(result)`."""
    from oloproof.testing import assert_gate as check

    return check
