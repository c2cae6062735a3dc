"""`observation()` and `service_cost()`: what the engine measured for the current case.

The engine times the system call and records every model call it makes; these
functions hand out read-only snapshots, so code under test can look at the figures
but never change them. A metric that reads them must say so (a metric file does it
by importing them, or `reward`, from `skynet`), because the verdict cache then keys
on the measurements too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from oloproof_core.cases.context import current_case, current_case_or_none
from oloproof_core.cases.observations import Observation
from oloproof_core.errors import UndeclaredReadError

_judging_reads: ContextVar[tuple[str, tuple[str, ...]] | None] = ContextVar(
    "oloproof_judging_reads", default=None
)


@contextmanager
def judging_with(criterion: str, reads: tuple[str, ...]) -> Iterator[None]:
    """Mark that an evaluator with these declared reads is judging, for the read check."""
    token = _judging_reads.set((criterion, reads))
    try:
        yield
    finally:
        _judging_reads.reset(token)


def observation() -> Observation:
    """The current case's measurements: wall time (ms) and the system's model cost and tokens.

    `latency_ms` is None while the system is still running (or when the case was not
    run by the engine); `cost_usd` is None when a model call could not be priced.
    """
    _check_declared("observation()")
    return current_case().measurements


def service_cost() -> float | None:
    """The system's model cost for the current case in US dollars; None if unmeasurable."""
    _check_declared("service_cost()")
    return current_case().measurements.cost_usd


def measured_or_none() -> Observation | None:
    """The measurements if a case is in progress (no error outside one); for `reward`."""
    context = current_case_or_none()
    if context is None:
        return None
    _check_declared("reward()")
    return context.measurements


def _check_declared(what: str) -> None:
    judging = _judging_reads.get()
    if judging is None:
        return
    criterion, reads = judging
    if "measurements" not in reads:
        raise UndeclaredReadError(
            f"metric {criterion!r} called {what}, which reads the case's measurements, "
            "but oloproof could not see that when it loaded the metric: import reward, "
            "observation or service_cost from skynet in the metric file itself (a helper "
            "module that calls them hides the dependency from the verdict cache)"
        )
