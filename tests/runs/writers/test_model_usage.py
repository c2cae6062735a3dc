"""Model calls by role are recorded per case and per run, and shown on the pages and the API."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from oloproof import evaluate
from oloproof.evaluators import ExactMatch, RubricJudge
from runs.models import Run
from runs.selectors.results import run_result
from runs.store import DjangoStore
from tests.support.chatty_system import chatty
from tests.support.fake_openai import FakeOpenAI, Reply

pytestmark = pytest.mark.django_db


def _recorded(models_on: FakeOpenAI) -> Run:
    models_on.respond_with(
        lambda request: Reply(
            "PASS. Polite." if "rubric" in request.user_text.lower() else "refund",
            prompt_tokens=100,
            completion_tokens=10,
        )
    )
    result = evaluate(
        chatty,
        [
            {"id": f"c{i}", "input": {"question": f"refund #{i}"}, "expected": {"label": "refund"}}
            for i in range(3)
        ],
        [
            ExactMatch(criterion="exact_label", field="label"),
            RubricJudge(criterion="polite", rubric="The rubric: is the answer polite?"),
        ],
        store=DjangoStore(),
        concurrency=1,
    )
    return Run.objects.get(pk=int(str(result.run_id)))


def test_usage_by_role_is_kept_for_the_run_and_each_case(models_on: FakeOpenAI) -> None:
    run = _recorded(models_on)
    usage = run.provenance["model_usage"]
    assert usage["system"]["calls"] == 3
    assert usage["system"]["input_tokens"] == 300
    assert usage["judge"]["calls"] == 3
    # $1 per million tokens in, $2 out: the system's cost alone is the release's cost.
    assert usage["system"]["cost_usd"] == pytest.approx(3 * (100 * 1 + 10 * 2) / 1e6)
    case = run.case_results.get(case_id="c0")
    assert {call["role"] for call in case.model_calls} == {"system", "judge"}
    assert case.cost_usd == pytest.approx((100 * 1 + 10 * 2) / 1e6)
    reloaded = run_result(run=run)
    assert reloaded.usage()["judge"].calls == 3


def test_the_pages_and_the_api_show_model_calls(models_on: FakeOpenAI, approver: Any) -> None:
    run = _recorded(models_on)
    client = Client()
    client.force_login(approver)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="model-usage"' in page
    assert "judge" in page
    case_page = client.get(f"/runs/{run.pk}/cases/c0").content.decode()
    assert 'id="case-model-calls"' in case_page
    cases = client.get(f"/api/runs/{run.pk}/cases").json()
    assert {call["role"] for call in cases["items"][0]["model_calls"]} == {"system", "judge"}
