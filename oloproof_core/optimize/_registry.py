"""The engines an optimization can use: a small registry, one module per engine.

An engine has a name, turns the optimization's request into its settings
(`configure`), and searches (`search`), recording each candidate through the
`Search` it is handed. Adding an engine is one module and one line here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from oloproof_core.errors import ConfigError
from oloproof_core.optimize._artifact import Artifact
from oloproof_core.optimize._auto import AUTO_ENGINE
from oloproof_core.optimize._budget import Budget
from oloproof_core.optimize._dspy_gepa import DSPY_GEPA_ENGINE
from oloproof_core.optimize._gepa import GEPA_ENGINE
from oloproof_core.optimize._search import Search
from oloproof_core.optimize._splits import Splits


class Engine(Protocol):
    name: str
    description: str

    def configure(
        self, *, artifact: Artifact, splits: Splits, budget: Budget, settings: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The engine's settings for this optimization (what is asked, checked and filled in).

        Called before anything is recorded or run: a `ConfigError` here (a package that
        does not import, a model that is not configured) refuses the optimization."""

    def search(self, search: Search) -> None:
        """Search until done or until the meter refuses (`BudgetExhausted`); what the
        engine's own callbacks cannot raise goes to `search.halt(error)`."""


ENGINES: dict[str, Engine] = {}


def register_engine(engine: Engine) -> Engine:
    """Make `engine` available by its name (a third-party engine registers itself so)."""
    ENGINES[engine.name] = engine
    return engine


for _builtin in (GEPA_ENGINE, DSPY_GEPA_ENGINE, AUTO_ENGINE):
    register_engine(_builtin)


def engine_named(name: str) -> Engine:
    try:
        return ENGINES[name]
    except KeyError:
        raise ConfigError(
            f"engine: unknown engine {name!r}; engines are " + ", ".join(sorted(ENGINES))
        ) from None
