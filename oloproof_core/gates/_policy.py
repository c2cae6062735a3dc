"""A loaded release policy: describes itself for provenance and decides runs.

What deciding needs (the rules' context, their plans, Holm's procedure) is imported by
the methods that decide: reading a policy, before a run or a search, needs its rules,
not the statistics that decide them (numpy's import among them, about 0.1 s).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from oloproof_core._util.canonical import canonical_json, digest_text
from oloproof_core._util.text_files import text_of
from oloproof_core.gates._baseline import resolve_baseline
from oloproof_core.gates._errors import PolicyError
from oloproof_core.gates._first_release import first_release_outcome
from oloproof_core.gates._gate import Gate, run_caveat
from oloproof_core.gates._outcome import Outcome, RuleOutcome
from oloproof_core.gates._schema import SCHEMA_VERSION, PolicySpec, parse_policy
from oloproof_core.gates._yaml_lines import load_yaml_with_lines

if TYPE_CHECKING:
    from oloproof_core.gates._context import DecisionContext
    from oloproof_core.results.result import Result
    from oloproof_core.results.store import Store

DEFAULT_CONFIDENCE = 0.95


class Policy:
    """Rules a run must satisfy to pass its gate (see docs/policy.md for the schema)."""

    def __init__(self, spec: PolicySpec, *, source: str, data: Mapping[str, Any]) -> None:
        self.spec = spec
        self.source = source
        # The digest is over the parsed content, so reformatting or reordering the
        # file leaves it unchanged while any change of meaning changes it.
        self.digest = digest_text(canonical_json(data))

    @property
    def rules(self) -> tuple[Any, ...]:
        return self.spec.rules

    @property
    def sequential(self) -> bool:
        return self.spec.batch is not None

    def as_sequential(self, batch: int) -> Policy:
        """The same rules decided with anytime-valid intervals, `batch` cases per look;
        PolicyError, before any case runs, for a rule that such a gate cannot read."""
        copy = Policy(replace(self.spec, batch=batch), source=self.source, data={})
        copy.digest = self.digest
        copy.check_declared({})
        return copy

    def check_declared(self, ranges: Mapping[str, tuple[float, float]]) -> None:
        """Refuse, before anything runs, rules that could never pass on these metrics.

        `ranges` maps the run's declared metric names to their score ranges (from
        the evaluators); rules on other names are checked when the run is decided.
        """
        for rule in self.spec.rules:
            refused = rule.refused_before_run(sequential=self.sequential)
            if refused is not None:
                raise PolicyError(refused)
            metric = getattr(rule, "metric", None)
            if isinstance(metric, str) and metric in ranges:
                problem = rule.never_passes(*ranges[metric])
                if problem is not None:
                    raise PolicyError(problem)

    @property
    def needs_baseline(self) -> bool:
        return any(rule.needs_baseline for rule in self.spec.rules)

    def describe(self) -> dict[str, Any]:
        spec = self.spec
        return {
            "source": self.source,
            "digest": self.digest,
            "version": SCHEMA_VERSION,
            "description": spec.description,
            "confidence": spec.confidence,
            "baseline": None if spec.baseline is None else spec.baseline.describe(),
            "rules": [rule.to_dict() for rule in spec.rules],
            "multiplicity": spec.multiplicity,
            "sequential": None if spec.batch is None else {"batch": spec.batch},
            "effect": spec.effect,
            **self._first_release_described(),
        }

    def _first_release_described(self) -> dict[str, Any]:
        baseline = self.spec.baseline
        if baseline is None or baseline.kind != "last_approved":
            return {}
        return {"on_first_release": self.spec.on_first_release}

    def baseline_before_run(
        self, system_name: str, store: Store | None, given: Result | None = None
    ) -> Result | None:
        """The baseline a run of `system_name` will be decided against, resolved before
        its first case: a file that does not load or a release that is not recorded raise
        PolicyError now, not after every case has run. None while no release of the system
        is approved (`last_approved`), or when no rule needs a baseline."""
        if given is not None or not self.needs_baseline:
            return given
        first = next(rule for rule in self.spec.rules if rule.needs_baseline)
        return resolve_baseline(self.spec.baseline, system_name, store, first.where)

    def decide(
        self,
        result: Result,
        baseline: Result | None = None,
        store: Store | None = None,
        *,
        horizon: int | None = None,
        readouts: bool = True,
    ) -> Gate:
        """Decide `result`: every rule's outcome and the gate's verdict.

        A sequential policy reads anytime-valid intervals tuned to `horizon` cases
        (default: the run's recorded horizon, else its number of cases), so the run
        may be decided again after every batch. Raises PolicyError when the policy
        cannot apply to this run: a rule names a metric the run lacks, a threshold
        lies outside the metric's range or can never be reached, or a
        no_regression rule has no baseline. `readouts=False` skips the sample-size
        readouts of undecided rules (a sequential run's intermediate looks).
        """
        from oloproof_core.gates._context import DecisionContext  # see the module

        confidence = self.spec.confidence or _run_confidence(result)
        context = DecisionContext(
            result=result,
            confidence=confidence,
            horizon=_horizon(result, horizon) if self.sequential else None,
            effect=self.spec.effect,
            readouts=readouts,
            planner=lambda rule: self._rule_plan(rule, result),
        )
        self._attach_baseline(context, baseline, store)
        for rule in self.spec.rules:
            rule.validate(context)
        outcomes = self._outcomes(context)
        baseline_info = None
        if context.baseline is not None:
            baseline_info = {"label": context.baseline_label, "run_id": context.baseline.run_id}
        return Gate.from_rules(
            outcomes,
            confidence=confidence,
            policy={
                "source": self.source,
                "digest": self.digest,
                "multiplicity": self.spec.multiplicity,
                "sequential": context.horizon,
            },
            baseline=baseline_info,
            caveat=run_caveat(result.provenance),
        )

    def _rule_plan(self, rule: object, result: Result) -> dict[str, Any] | None:
        """`rule`'s line of `oloproof plan release.yaml --result` for this run: planned
        from the run alone, as the run page plans it, so every face says one figure."""
        from oloproof_core.gates._plan import plan_rule

        planned = plan_rule(self, rule, result=result)
        return None if planned is None else planned.to_dict()

    def _outcomes(self, context: DecisionContext) -> list[RuleOutcome]:
        """Every rule's outcome; without a baseline yet (a first release), the rules that
        need one say what `on_first_release` says and stay out of Holm's procedure."""
        first_release = self.needs_baseline and context.baseline is None
        checked = [rule for rule in self.spec.rules if not (first_release and rule.needs_baseline)]
        outcomes = [rule.check(context) for rule in checked]
        if self.spec.multiplicity == "holm":
            from oloproof_core.gates._holm import apply_holm

            outcomes = apply_holm(tuple(checked), outcomes, context)
        by_rule = dict(zip(map(id, checked), outcomes, strict=True))
        system = str((context.result.provenance.get("system") or {}).get("name") or "")
        return [
            by_rule.get(id(rule))
            or first_release_outcome(
                rule, system=system, outcome=cast(Outcome, self.spec.on_first_release)
            )
            for rule in self.spec.rules
        ]

    def _attach_baseline(
        self, context: DecisionContext, baseline: Result | None, store: Store | None
    ) -> None:
        if not self.needs_baseline:
            return
        if baseline is None:
            system = context.result.provenance.get("system") or {}
            baseline = self.baseline_before_run(str(system.get("name") or ""), store)
        if baseline is None:  # no release approved yet: `_outcomes` reads on_first_release
            return
        context.baseline = baseline
        from oloproof_core.results.compare._compare_runs import run_label

        context.baseline_label = run_label(baseline)


def _horizon(result: Result, given: int | None) -> int:
    if given is not None:
        return max(given, len(result.cases))
    recorded = (result.provenance.get("sequential") or {}).get("horizon")
    if isinstance(recorded, int) and recorded >= len(result.cases):
        return recorded
    return len(result.cases)


def _run_confidence(result: Result) -> float:
    level = result.provenance.get("confidence")
    if isinstance(level, (int, float)) and 0 < level < 1:
        return float(level)
    if result.metrics:
        return result.metrics[0].confidence
    return DEFAULT_CONFIDENCE


def load_policy(source: Policy | Mapping[str, Any] | str | os.PathLike[str]) -> Policy:
    """A policy from a release.yaml path, a dict of the same shape, or a Policy."""
    if isinstance(source, Policy):
        return source
    if isinstance(source, Mapping):
        spec = parse_policy(source, "<policy dict>", {}, None)
        return Policy(spec, source="<policy dict>", data=source)
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        try:
            with open(path, "rb") as handle:
                content = handle.read()
        except OSError as exc:
            raise PolicyError(
                f"{path}: cannot read the policy: {exc.strerror} (paths are "
                f"relative to {os.getcwd()})"
            ) from None
        text = text_of(content, source=path, error=PolicyError)
        data, lines = load_yaml_with_lines(text, path)
        spec = parse_policy(data, path, lines, os.path.dirname(os.path.abspath(path)))
        return Policy(spec, source=path, data=data)
    raise PolicyError(
        f"a policy is a path to a release.yaml, a dict or a Policy, got {type(source).__name__}"
    )
