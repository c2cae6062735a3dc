"""Dashboard pages over real recorded runs: filters, case table, decisions, comparisons."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from metrics.models import CaseVerdict
from runs.access import LOCAL
from runs.models import Approval, Run
from runs.selectors.cases import CaseFilters, run_case_table
from runs.writers.projects import code_root_register, project_default_ensure
from tests.runs.conftest import record_evaluation
from tests.support.platform import write_project

pytestmark = pytest.mark.django_db

POLICY: dict[str, Any] = {"version": 1, "rules": [{"metric": "exact_label", "min": 0.9}]}


def recorded(version: str, **kwargs: Any) -> Run:
    return Run.objects.get(pk=int(record_evaluation(20, version=version, **kwargs).run_id))


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_case_table_filters_by_criterion_outcome_in_the_database(teammate) -> None:
    run = recorded("1", broken_every=5, wrong_every=4)
    verdicts = CaseVerdict.objects.filter(run=run, criterion="exact_label")
    expected = {
        "passed": {v.case_id for v in verdicts if v.value is not None and v.value >= 1},
        "failed": {v.case_id for v in verdicts if v.value is not None and v.value < 1},
        "missing": {v.case_id for v in verdicts if v.value is None},
    }
    assert all(expected.values())
    for outcome, ids in expected.items():
        filters = CaseFilters(criterion="exact_label", outcome=outcome)
        assert {case.case_id for case in run_case_table(run=run, filters=filters)} == ids
    page = signed_in(teammate).get(f"/runs/{run.pk}/cases/?criterion=exact_label&outcome=missing")
    assert page.status_code == 200
    for case_id in expected["missing"]:
        assert case_id.encode() in page.content
    for case_id in expected["passed"]:
        assert case_id.encode() not in page.content


def test_the_case_search_looks_in_ids_outputs_and_errors(teammate) -> None:
    run = recorded("1", broken_every=5)
    by_error = run_case_table(run=run, filters=CaseFilters(search="backend down on case 10"))
    assert [case.case_id for case in by_error] == ["case_00010"]
    by_id = run_case_table(run=run, filters=CaseFilters(search="case_0001"))
    assert len(by_id) == 10
    assert len(run_case_table(run=run, filters=CaseFilters(search="refund"))) > 0


def test_the_runs_page_filters_and_shows_missing_counts_and_gates(teammate) -> None:
    first = recorded("1", policy=POLICY)
    second = recorded("2", broken_every=5, policy=POLICY)
    client = signed_in(teammate)
    everything = client.get("/").content.decode()
    assert f"#{first.pk}<" in everything
    assert f"#{second.pk}<" in everything
    assert "4 missing" in everything
    only_second = client.get("/?release=2").content.decode()
    assert f"#{second.pk}<" in only_second
    assert f"#{first.pk}<" not in only_second
    by_gate = client.get(f"/?gate={first.gate.outcome}").content.decode()
    assert f"#{first.pk}<" in by_gate


def test_run_case_and_system_pages_show_what_was_recorded(teammate) -> None:
    run = recorded("1", broken_every=5, policy=POLICY)
    client = signed_in(teammate)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    for text in ("exact_label", "clopper-pearson", "exact_label ≥ 0.9", run.dataset.digest):
        assert text in page
    assert 'id="run-chart"' in page
    case = client.get(f"/runs/{run.pk}/cases/case_00005").content.decode()
    assert "RuntimeError" in case
    assert "backend down on case 5" in case
    assert "Traceback" in case
    system = client.get(f"/systems/{run.release.system_id}/").content.decode()
    assert 'id="release-chart"' in system
    assert f"#{run.pk}" in system


def test_an_approver_decides_and_the_decision_shows_everywhere(approver) -> None:
    run = recorded("1", broken_every=3, policy=POLICY)
    assert run.gate.outcome != "pass"
    client = signed_in(approver)
    refused = client.post(f"/runs/{run.pk}/decide", {"decision": "approve", "comment": "ok"})
    assert refused.status_code == 400
    assert "tick &#x27;Override&#x27; to approve it anyway" in refused.content.decode()
    assert Approval.objects.count() == 0
    assert "override" in client.get(f"/runs/{run.pk}/").content.decode()
    client.post(
        f"/runs/{run.pk}/decide",
        {"decision": "approve", "override": "on", "comment": "flaky backend, fixed upstream"},
    )
    approval = Approval.objects.get()
    assert (approval.user, approval.override, approval.gate.run_id) == (approver, True, run.pk)
    for path in (f"/runs/{run.pk}/", "/gates/", f"/systems/{run.release.system_id}/"):
        page = client.get(path).content.decode()
        assert "override" in page, path
        assert "alice" in page, path
    assert "flaky backend, fixed upstream" in client.get("/gates/").content.decode()


@pytest.mark.parametrize("user_fixture", ["teammate", "outsider"])
def test_users_without_the_permission_cannot_decide(request, user_fixture) -> None:
    run = recorded("1", policy=POLICY)
    client = signed_in(request.getfixturevalue(user_fixture))
    response = client.post(f"/runs/{run.pk}/decide", {"decision": "approve", "comment": "x"})
    # A member without the approver role is refused; an outsider does not see the run.
    assert response.status_code == (403 if user_fixture == "teammate" else 404)
    assert Approval.objects.count() == 0
    page = client.get(f"/runs/{run.pk}/")
    assert "Record decision" not in page.content.decode()


def test_compare_pairs_two_releases_and_shows_changed_cases(teammate) -> None:
    baseline = recorded("1")
    candidate = recorded("2", wrong_every=4)
    client = signed_in(teammate)
    page = client.get(f"/compare/?baseline={baseline.pk}&candidate={candidate.pk}")
    assert page.status_code == 200
    content = page.content.decode()
    assert 'id="compare-chart"' in content
    assert "Regressed (5)" in content  # the grid's filter, with its count
    assert f"/runs/{candidate.pk}/cases/case_00001" in content


def test_compare_refuses_runs_on_different_datasets(teammate) -> None:
    baseline = recorded("1")
    other = Run.objects.get(pk=int(record_evaluation(12, version="2").run_id))
    page = signed_in(teammate).get(f"/compare/?baseline={baseline.pk}&candidate={other.pk}")
    assert page.status_code == 400
    assert "different datasets" in page.content.decode()


def test_compare_pairs_case_means_when_runs_repeated_their_cases_differently(
    teammate,
) -> None:
    twice = Run.objects.get(pk=int(record_evaluation(6, repeats=2, isolation="thread").run_id))
    thrice = Run.objects.get(pk=int(record_evaluation(6, repeats=3, isolation="thread").run_id))
    other = Run.objects.get(pk=int(record_evaluation(7, repeats=3, isolation="thread").run_id))
    client = signed_in(teammate)
    page = client.get(f"/compare/?baseline={twice.pk}&candidate={thrice.pk}")
    assert page.status_code == 200, page.content.decode()[:2000]
    content = page.content.decode()
    assert "pairs: each case&#x27;s mean over each run&#x27;s own repeats" in content
    assert "Flaky (" in content  # the grid's filter against each case's own noise
    # The third repeat's row is the candidate's alone: no link to a baseline case page.
    assert f"/runs/{thrice.pk}/cases/case_00001%23r3" in content
    assert f"/runs/{twice.pk}/cases/case_00001%23r3" not in content
    # The pickers offer the runs of these cases at any repeat count, and no other.
    assert f'<option value="{twice.pk}"' in content
    assert f'<option value="{other.pk}"' not in content


def test_the_status_endpoint_reports_progress(teammate) -> None:
    run = recorded("1")
    data = signed_in(teammate).get(f"/runs/status.json?ids={run.pk},abc").json()
    assert data["runs"] == [
        {
            "id": run.pk,
            "status": "succeeded",
            "cases_done": 20,
            "cases_total": 20,
            "cases_failed": 0,
            "error": "",
        }
    ]


def test_new_run_needs_the_add_run_permission(outsider, teammate) -> None:
    assert signed_in(outsider).get("/runs/new/").status_code == 403
    page = signed_in(teammate).get("/runs/new/")
    assert page.status_code == 200
    assert b"Queue the run" in page.content


def test_the_new_run_form_shows_every_key_of_a_run_config(teammate) -> None:
    """A key the form takes but does not show would refuse a value with an error no one
    sees: every key of the run-config schema has its field and its error on the page."""
    import oloproof_core as engine

    content = signed_in(teammate).get("/runs/new/").content.decode()
    for item in engine.RUN_CONFIG_FIELDS:
        assert f'name="{item.name}"' in content, item.name
    refused = signed_in(teammate).post("/runs/new/", {"judge_repeats": "0"}).content.decode()
    assert "judge_repeats must be a whole number from 1 to 100" in refused


def test_the_new_run_form_queues_a_run_and_its_page_follows_it(teammate, tmp_path) -> None:
    write_project(tmp_path, n_cases=4)
    code_root_register(by=LOCAL, project=project_default_ensure(), path=str(tmp_path))
    client = signed_in(teammate)
    response = client.post(
        "/runs/new/",
        {
            "project": "default",
            "base_dir": str(tmp_path),
            "system": "bot.py:answer",
            "dataset": "data.jsonl",
            "evaluators": (
                "ExactMatch: {criterion: exact_label, field: label}\nchecks.py:short_label"
            ),
            "policy": "",
            "split": "",
        },
    )
    run = Run.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/runs/{run.pk}/"
    assert run.status == "queued"
    assert run.created_by == teammate
    assert run.config["evaluators"] == [
        {"ExactMatch": {"criterion": "exact_label", "field": "label"}},
        "checks.py:short_label",
    ]
    assert run.cases_total == 4
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert f'data-live-run="{run.pk}"' in page
    assert "data-reload-when-done" in page
    # The form can start again from this recorded config.
    again = client.get(f"/runs/new/?from={run.pk}").content.decode()
    assert "checks.py:short_label" in again
    assert str(tmp_path) in again


def test_the_new_run_form_explains_what_is_wrong(teammate) -> None:
    page = signed_in(teammate).post(
        "/runs/new/", {"base_dir": "relative/dir", "system": "", "evaluators": "- [unclosed"}
    )
    content = page.content.decode()
    assert page.status_code == 200
    assert Run.objects.count() == 0
    assert "give an absolute folder" in content
    assert "system is required" in content
    assert "not valid YAML" in content
