"""The run page shows a recorded run's latency and cost figures, and its rules on them."""

from __future__ import annotations

import re
from typing import Any

import pytest

from oloproof import evaluate
from oloproof.evaluators import ExactMatch
from oloproof.testing import queue_approvals
from runs.models import Run
from runs.store import DjangoStore
from tests.runs.conftest import make_bot, support_rows
from tests.runs.views.test_run_page import page_of, words

pytestmark = pytest.mark.django_db

POLICY: dict[str, Any] = {
    "version": 1,
    "rules": [
        {"metric": "latency_p95_ms", "max": 60000},
        {"metric": "cost_per_case_usd", "max": 0.01, "cap_usd": 0.05},
    ],
}


def test_the_run_page_shows_latency_and_cost_with_intervals(teammate: Any) -> None:
    with queue_approvals():
        result = evaluate(
            make_bot(version="1"),
            support_rows(80),
            [ExactMatch(criterion="exact_label", field="label")],
            store=DjangoStore(),
            concurrency=1,
            policy=POLICY,
        )
    assert result.gate.outcome == "pass"
    run = Run.objects.get(pk=int(result.run_id))
    figures = [item["metric"] for item in run.provenance["measured"]]
    assert figures == [
        "latency_p50_ms", "latency_p95_ms", "cost_per_case_usd", "cost_per_success_usd"
    ]  # fmt: skip
    page = page_of(teammate, run)
    block = words(page.split('id="measured"', 1)[1].split("</section>", 1)[0])
    assert "Latency and cost" in block
    assert re.search(r"latency_p95_ms [\d.,]+ ms \[[\d.,]+ ms, [\d.,]+ ms\]", block), block
    # The system makes no model calls: $0 a case, bounded above under the policy's cap.
    assert re.search(r"cost_per_case_usd \$0 \[\$0, \$0\.\d+\]", block), block
    assert "latency_p95_ms ≤ 60000" in words(page)
