"""The `auto` engine: picks the engine and its settings from the artifact and the budget.

The rule (docs/optimization.md, "Engines"):

- a DSPy program is optimized with `dspy-gepa`; named components with `gepa`;
- reflection minibatches hold 3 train cases (fewer if train has fewer);
- candidates are selected from the Pareto front of val cases when val has at least
  8 cases, else the best mean on val is improved (`current_best`): a front over a
  handful of cases is mostly noise;
- merging two candidates is tried only when there are at least two components and
  the metric-call budget (if any) covers at least 10 full val evaluations, since
  each merge costs an evaluation that reflection could have used.

Settings given explicitly under `settings:` win over the rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from oloproof_core.optimize._artifact import Artifact
from oloproof_core.optimize._budget import Budget
from oloproof_core.optimize._dspy_gepa import DSPY_GEPA_ENGINE
from oloproof_core.optimize._gepa import GEPA_ENGINE
from oloproof_core.optimize._search import Search
from oloproof_core.optimize._splits import Splits

PARETO_MIN_VAL = 8
MERGE_MIN_VAL_EVALS = 10


def auto_choice(
    *, artifact: Artifact, splits: Splits, budget: Budget, settings: Mapping[str, Any]
) -> tuple[str, dict[str, Any]]:
    """(engine name, settings) as the rule picks them."""
    engine = DSPY_GEPA_ENGINE if artifact.kind == "dspy" else GEPA_ENGINE
    calls = budget.metric_calls
    merge = len(artifact.seed_texts) >= 2 and (
        calls is None or calls >= MERGE_MIN_VAL_EVALS * len(splits.val)
    )
    chosen = {
        "minibatch_size": min(3, len(splits.train)),
        "candidate_selection": "pareto" if len(splits.val) >= PARETO_MIN_VAL else "current_best",
        "use_merge": merge,
        **dict(settings),
    }
    return engine.name, engine.configure(
        artifact=artifact, splits=splits, budget=budget, settings=chosen
    )


class AutoEngine:
    name = "auto"
    description = "dspy-gepa for DSPy programs, gepa for components; settings from the budget"

    def configure(
        self, *, artifact: Artifact, splits: Splits, budget: Budget, settings: Mapping[str, Any]
    ) -> dict[str, Any]:
        engine, chosen = auto_choice(
            artifact=artifact, splits=splits, budget=budget, settings=settings
        )
        return {**chosen, "engine": engine}

    def search(self, search: Search) -> None:
        engine = DSPY_GEPA_ENGINE if search.settings["engine"] == "dspy-gepa" else GEPA_ENGINE
        engine.search(search)


AUTO_ENGINE = AutoEngine()
