"""A loaded release policy: describes itself for provenance and decides runs."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from oloproof_core._canonical import canonical_json, digest_text
from oloproof_core.compare._compare_runs import run_label as describe_run
from oloproof_core.gates._baseline import resolve_baseline
from oloproof_core.gates._context import DecisionContext
from oloproof_core.gates._errors import PolicyError
from oloproof_core.gates._gate import Gate
from oloproof_core.gates._schema import SCHEMA_VERSION, PolicySpec, parse_policy
from oloproof_core.gates._yaml_lines import load_yaml_with_lines

if TYPE_CHECKING:
    from oloproof_core.result import Result
    from oloproof_core.store import Store

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
        }

    def decide(
        self, result: Result, baseline: Result | None = None, store: Store | None = None
    ) -> Gate:
        """Decide `result`: every rule's outcome and the gate's verdict.

        Raises PolicyError when the policy cannot apply to this run: a rule names a
        metric the run lacks, a threshold lies outside the metric's range, or a
        no_regression rule has no baseline.
        """
        confidence = self.spec.confidence or _run_confidence(result)
        context = DecisionContext(result=result, confidence=confidence)
        if self.needs_baseline:
            first = next(rule for rule in self.spec.rules if rule.needs_baseline)
            if baseline is None:
                baseline = resolve_baseline(self.spec.baseline, result, store, first.where)
            context.baseline = baseline
            context.baseline_label = describe_run(baseline)
        for rule in self.spec.rules:
            rule.validate(context)
        outcomes = [rule.check(context) for rule in self.spec.rules]
        baseline_info = None
        if context.baseline is not None:
            baseline_info = {"label": context.baseline_label, "run_id": context.baseline.run_id}
        return Gate.from_rules(
            outcomes,
            confidence=confidence,
            policy={"source": self.source, "digest": self.digest},
            baseline=baseline_info,
        )


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
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as exc:
            raise PolicyError(
                f"{path}: cannot read the policy: {exc.strerror} (paths are "
                f"relative to {os.getcwd()})"
            ) from None
        data, lines = load_yaml_with_lines(text, path)
        spec = parse_policy(data, path, lines, os.path.dirname(os.path.abspath(path)))
        return Policy(spec, source=path, data=data)
    raise PolicyError(
        f"a policy is a path to a release.yaml, a dict or a Policy, got {type(source).__name__}"
    )
