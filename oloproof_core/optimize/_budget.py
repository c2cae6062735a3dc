"""Limits of an optimization: metric calls, US dollars as measured, wall time.

A metric call is one case the search asks a candidate's score for (every evaluator
of the case), whether it was judged now, came from the verdict cache or was
served from the optimization's own records: the search asked, so it counts, as
in GEPA's own `max_metric_calls`. A resumed optimization counts the calls of its
replayed search again, from zero.
Dollars are what was measured: the system's model calls while candidates ran, the
metric's and judges' calls while they were judged, and the reflection model's
calls; a call that could not be priced adds nothing and is counted as unmeasured.
Wall time runs from the optimization's start, across a resumed worker too.

The meter is asked before each evaluation whether it may run (`take`): an
evaluation that would take the metric calls past their limit is refused, and once
any limit is reached every further evaluation is refused, so the search stops at
the first limit with what it has recorded. The metric calls are never overrun, by
any engine; dollars and time are checked before each evaluation and reflection, so
they can be overrun by the one under way when the limit is crossed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from oloproof_core.cases.case import CaseResult
from oloproof_core.errors import ConfigError, OloproofError

LIMITS = ("metric_calls", "usd", "wall_time_s")


class BudgetExhausted(OloproofError):  # noqa: N818 - it is a stop signal, not a failure
    """Raised to stop the search at a limit; the optimization keeps what it recorded."""

    def __init__(self, limit: str) -> None:
        self.limit = limit
        super().__init__(f"the {limit} limit is reached")


@dataclass(frozen=True, slots=True)
class Budget:
    """At least one limit; None means that quantity is not limited."""

    metric_calls: int | None = None
    usd: float | None = None
    wall_time_s: float | None = None

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> Budget:
        if not isinstance(data, Mapping) or not data:
            raise ConfigError(
                "budget: give at least one limit, e.g. "
                "{metric_calls: 200, usd: 2.0, wall_time_s: 900}"
            )
        unknown = sorted(set(data) - set(LIMITS))
        if unknown:
            raise ConfigError(
                f"budget: unknown limit {unknown[0]!r}; limits are " + ", ".join(LIMITS)
            )
        for key, value in data.items():
            integer = key == "metric_calls"
            valid = isinstance(value, int) if integer else isinstance(value, (int, float))
            if isinstance(value, bool) or not valid or not value > 0:
                kind = "a positive integer" if integer else "a positive number"
                raise ConfigError(f"budget: {key} must be {kind}, got {value!r}")
        return cls(
            metric_calls=data.get("metric_calls"),
            usd=None if data.get("usd") is None else float(data["usd"]),
            wall_time_s=None if data.get("wall_time_s") is None else float(data["wall_time_s"]),
        )

    def to_dict(self) -> dict[str, Any]:
        return {key: value for key, value in asdict(self).items() if value is not None}


@dataclass(slots=True)
class BudgetUsed:
    metric_calls: int = 0
    usd: float = 0.0
    unpriced_calls: int = 0
    wall_time_s: float = 0.0
    reflection_calls: int = 0
    stopped_by: str | None = None
    usd_by_role: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["usd"] = round(self.usd, 8)
        data["wall_time_s"] = round(self.wall_time_s, 3)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> BudgetUsed:
        data = dict(data or {})
        return cls(**{key: data[key] for key in cls.__slots__ if key in data})


class Meter:
    """What an optimization has used against its budget; safe to share between threads."""

    def __init__(self, budget: Budget, used: BudgetUsed | None = None) -> None:
        self.budget = budget
        self._used = used or BudgetUsed()
        self._stopped_by = self._used.stopped_by
        self._base_s = self._used.wall_time_s
        self._started = time.monotonic()
        self._lock = threading.Lock()
        self._take_lock = threading.Lock()

    def used(self) -> BudgetUsed:
        with self._lock:
            used = BudgetUsed(**{key: getattr(self._used, key) for key in BudgetUsed.__slots__})
            used.usd_by_role = dict(used.usd_by_role)
        used.wall_time_s = self._base_s + time.monotonic() - self._started
        used.stopped_by = self._stopped_by
        return used

    def reached(self) -> str | None:
        """The first limit reached, if any (and remembered from then on)."""
        if self._stopped_by is not None:
            return self._stopped_by
        used, budget = self.used(), self.budget
        for limit, spent, allowed in (
            ("metric_calls", used.metric_calls, budget.metric_calls),
            ("usd", used.usd, budget.usd),
            ("wall_time_s", used.wall_time_s, budget.wall_time_s),
        ):
            if allowed is not None and spent >= allowed:
                self._stopped_by = limit
                return limit
        return None

    def admit(self, metric_calls: int) -> None:
        """Raise BudgetExhausted unless `metric_calls` more fit within every limit."""
        reached = self.reached()
        if reached is not None:
            raise BudgetExhausted(reached)
        allowed = self.budget.metric_calls
        if allowed is not None and self.used().metric_calls + metric_calls > allowed:
            self._stopped_by = "metric_calls"
            raise BudgetExhausted("metric_calls")

    def take(self, metric_calls: int) -> None:
        """`admit` and charge `metric_calls` at once: between threads that ask together,
        only those that fit are let through."""
        with self._take_lock:
            self.admit(metric_calls)
            self.charge_metric_calls(metric_calls)

    def charge_cases(self, cases: Iterable[CaseResult]) -> None:
        """One metric call per case, and every model call the case made."""
        cases = list(cases)
        self.charge_metric_calls(len(cases))
        self.charge_costs(cases)

    def charge_costs(self, cases: Iterable[CaseResult]) -> None:
        with self._lock:
            for case in cases:
                for call in case.measurements.model_calls:
                    self._add_cost(call.role, call.cost_usd)

    def charge_metric_calls(self, count: int) -> None:
        with self._lock:
            self._used.metric_calls += count

    def charge_call(self, role: str, cost_usd: float | None) -> None:
        with self._lock:
            if role == "reflection":
                self._used.reflection_calls += 1
            self._add_cost(role, cost_usd)

    def _add_cost(self, role: str, cost_usd: float | None) -> None:
        if cost_usd is None:
            self._used.unpriced_calls += 1
            return
        self._used.usd += cost_usd
        self._used.usd_by_role[role] = self._used.usd_by_role.get(role, 0.0) + cost_usd
