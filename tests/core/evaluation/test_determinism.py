"""The same set of cases gives the same figures in any order (intervals, tests, gates)."""

from __future__ import annotations

import numpy as np

from oloproof_core.gates import load_policy
from oloproof_core.results.compare import compare_runs
from tests.support.synthetic_runs import make_run


def _shuffled(rng, ids, *columns):
    order = rng.permutation(len(ids))
    return [ids[i] for i in order], *[[column[i] for i in order] for column in columns]


def test_scores_rates_comparisons_and_gates_ignore_row_order():
    rng = np.random.default_rng(14)
    n = 100
    ids = [f"q{i:03d}" for i in range(n)]
    scores = list(rng.beta(8, 2, n))
    verdicts = list((rng.random(n) < 0.8).astype(float))
    base_scores = list(np.clip(np.array(scores) + rng.normal(0, 0.05, n), 0, 1))
    value_types = {"score": "score", "label": "pass_fail"}
    policy = load_policy(
        {
            "version": 1,
            "rules": [
                {"metric": "score", "min": 0.78},
                {"metric": "score", "no_regression": {"margin": 0.01}},
            ],
        }
    )

    def figures(order_ids, s, v, b):
        run = make_run({"score": s, "label": v}, value_types=value_types, ids=order_ids)
        base = make_run({"score": b, "label": v}, value_types=value_types, ids=order_ids)
        comparison = compare_runs(base, run).metric("score")
        gate = policy.decide(run, baseline=base)
        return (
            run.metric("score").interval,
            run.metric("label").interval,
            comparison.interval,
            comparison.p_value,
            gate.outcome,
            tuple(rule.outcome for rule in gate.rules),
        )

    reference = figures(ids, scores, verdicts, base_scores)
    for _ in range(50):
        assert figures(*_shuffled(rng, ids, scores, verdicts, base_scores)) == reference
