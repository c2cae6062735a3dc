"""What the run page reads beside the run itself: its chart, gate in words, plan, and
the comparison with the previous release."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from metrics.charts import run_interval_chart
from metrics.models import MetricEstimate
from runs.access import Actor
from runs.models import Run
from runs.selectors.gate_plan import run_gate_plan
from runs.selectors.previous_release import run_previous_comparison
from runs.views.gate_wording import MetricFacts, gate_rules_explained
from runs.views.label_readouts import run_label_figures
from runs.views.more_cases import gate_summary, rules_with_one_answer


def run_page_readouts(
    *, user: Actor, run: Run, estimates: Sequence[MetricEstimate]
) -> dict[str, Any]:
    """The run page's chart, gate rules, planning figure and previous-release comparison."""
    gate = getattr(run, "gate", None)
    rules = list(gate.rules) if gate is not None else []
    thresholds: dict[str, list[float]] = defaultdict(list)
    for rule in rules:
        figures = rule.get("figures") or {}
        if rule.get("kind") == "bound" and isinstance(figures.get("threshold"), int | float):
            thresholds[str(rule.get("metric"))].append(float(figures["threshold"]))
    facts = {item.metric: MetricFacts(item.value_type, item.warning) for item in estimates}
    policy = (run.provenance or {}).get("policy") or {}
    confidence = float(policy.get("confidence") or run.confidence)
    plan = run_gate_plan(run=run)
    explained = gate_rules_explained(rules=rules, confidence=confidence, metrics=facts)
    return {
        "chart": run_interval_chart(estimates, thresholds=thresholds) if estimates else "",
        "chart_shows": {
            "estimate": any(item.estimate is not None for item in estimates),
            "nothing_observed": any(item.estimate is None for item in estimates),
            "threshold": bool(thresholds),
            "missing": any(item.n_missing for item in estimates),
        },
        "warnings": [item for item in estimates if item.warning],
        "gate_rules": rules_with_one_answer(explained, plan),
        "gate_summary": gate_summary(summary=gate.summary, rules=rules, plan=plan)
        if gate is not None
        else "",
        "gate_plan": plan,
        "previous": run_previous_comparison(user=user, run=run),
        "label_figures": run_label_figures(user=user, run=run, estimates=estimates),
    }
