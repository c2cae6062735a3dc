"""What an optimization checks before it records anything or calls a model.

A mistake found after the search has been paid for is found too late: a typo in the
policy would surface only when the winner's test run is decided, after every
candidate and both test runs. So everything the optimization will need is checked
first, and a problem is a `ConfigError` that names it:

- the evaluators and the policy, as any run plans them (the policy loaded, its
  thresholds within the metrics' ranges), and every metric the policy names is one
  the evaluators produce: a criterion, or a sub-score `criterion.name` of one;
- the objective is one of the criteria;
- the metric-call budget covers at least the seed's val evaluation;
- the engine, its settings and its packages, and the reflection model
  (`Engine.configure`).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oloproof_core.datasets.dataset import load_dataset
from oloproof_core.datasets.rows import Dataset
from oloproof_core.errors import ConfigError
from oloproof_core.evaluation.plan import plan_run
from oloproof_core.evaluation.repeats import counted_repeats, repeated_dataset
from oloproof_core.optimize._artifact import Artifact, artifact_from
from oloproof_core.optimize._budget import Budget
from oloproof_core.optimize._registry import Engine, engine_named
from oloproof_core.optimize._splits import Splits, split_rows

if TYPE_CHECKING:
    from oloproof_core.optimize._spec import OptimizationSpec


@dataclass(frozen=True, slots=True)
class Prepared:
    """An optimization's checked inputs: what the search and the proof run with."""

    data: Dataset
    splits: Splits
    artifact: Artifact
    objective: str
    engine: Engine
    settings: dict[str, Any]
    policy: Any
    """The loaded policy (None without one): the one the winner's gate is decided by."""


def prepare(spec: OptimizationSpec) -> Prepared:
    """Load and check everything the optimization needs; raise before anything runs."""
    data = load_dataset(spec.dataset)
    # Cases are split first, then repeated: a case's repeats never straddle two splits.
    splits = split_rows(data.rows, fractions=spec.splits).repeated(counted_repeats(spec.repeats))
    artifact = artifact_from(
        spec.system, components=spec.components, name=spec.name, version=spec.version
    )
    plan = plan_run(
        system=artifact.make_release(artifact.seed_texts, artifact.base_version or "0"),
        evaluators=spec.evaluators,
        policy=spec.policy,
        concurrency=spec.concurrency,
        timeout=spec.timeout,
        confidence=spec.confidence,
        repeats=spec.repeats,
    )
    criteria = [evaluator.criterion for evaluator in plan.evaluators]
    objective = spec.objective or criteria[0]
    if objective not in criteria:
        raise ConfigError(
            f"objective: {objective!r} is not a criterion of the evaluators; "
            f"the criteria are {', '.join(criteria)}{_close(objective, criteria)}"
        )
    if plan.policy is not None:
        check_policy_metrics(plan.policy.rules, criteria)
    check_budget_fits(spec.budget, splits)
    engine = engine_named(spec.engine)
    settings = engine.configure(
        artifact=artifact, splits=splits, budget=spec.budget, settings=spec.settings
    )
    return Prepared(
        data=repeated_dataset(data, spec.repeats),
        splits=splits,
        artifact=artifact,
        objective=objective,
        engine=engine,
        settings=settings,
        policy=plan.policy,
    )


def check_policy_metrics(rules: Sequence[Any], criteria: Sequence[str]) -> None:
    """Every metric a rule names must be a criterion or a sub-score of one.

    Sub-score names are known only once the metric has returned them, so
    `criterion.anything` passes here for a criterion the evaluators have.
    """
    for rule in rules:
        named = [getattr(rule, "metric", None), *getattr(rule, "metrics", ())]
        for metric in named:
            if not isinstance(metric, str):
                continue
            if metric in criteria or metric.partition(".")[0] in criteria:
                continue
            where = getattr(rule, "where", "policy")
            raise ConfigError(
                f"{where}: unknown metric {metric!r}; the optimization's metrics are "
                f"{', '.join(criteria)} and their sub-scores, named criterion.name"
                f"{_close(metric, criteria)}"
            )


def check_budget_fits(budget: Budget, splits: Splits) -> None:
    if budget.metric_calls is not None and budget.metric_calls < len(splits.val):
        cases = f"{len(splits.val)} cases"
        if splits.repeats > 1:
            cases = f"{len(splits.val) // splits.repeats} cases × {splits.repeats} repeats"
        raise ConfigError(
            f"budget: {budget.metric_calls} metric calls cannot even evaluate the "
            f"seed on val ({cases}); allow at least "
            f"{len(splits.val) * 3} to leave room for candidates"
        )


def _close(name: str, known: Sequence[str]) -> str:
    match = difflib.get_close_matches(name, known, n=1)
    return f" (did you mean {match[0]!r}?)" if match else ""
