"""Scratch runs do not take over a release's history, and runs can be named, tagged,
hidden and deleted through the REST API, the command and the library, as on the run
page (tests/browser/test_run_keeping.py); deleting is on the audit list and refused
for a run with an approval decision."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client

import oloproof
from oloproof import evaluate
from oloproof.cli import main
from oloproof.evaluators import evaluator
from oloproof.testing import queue_approvals
from runs.models import Change, Run
from runs.services import approval_create
from runs.store import DjangoStore
from tests.runs.conftest import make_bot, member, record_evaluation, support_rows

pytestmark = pytest.mark.django_db

POLICY: dict[str, Any] = {"version": 1, "rules": [{"metric": "exact_label", "min": 0.5}]}


def scratch_run(version: str, number: int) -> Run:
    """A debugging run of an unchanged release: a throwaway evaluator, every case failing."""

    @evaluator(criterion=f"debug_{number}", reads=("output",))
    def throwaway(case: Any) -> bool:
        return bool(case.output)

    with queue_approvals():
        result = evaluate(
            make_bot(version=version, broken_every=1),
            support_rows(20),
            [throwaway],
            store=DjangoStore(),
            concurrency=1,
            isolation="thread",
        )
    return Run.objects.get(pk=int(result.run_id))


def recorded(version: str, **kwargs: Any) -> Run:
    return Run.objects.get(pk=int(record_evaluation(20, version=version, **kwargs).run_id))


def figure_runs(client: Client, run: Run) -> dict[str, int]:
    """The system page's release rows: version → the run its figure comes from."""
    page = client.get(f"/systems/{run.release.system_id}/").content.decode()
    rows = re.findall(r"<strong>@(\w+)</strong>.*?href=\"/runs/(\d+)/\"", page, flags=re.S)
    return {version: int(run_id) for version, run_id in rows}


def test_debugging_runs_never_take_a_releases_place_on_its_system_page(viewer_client) -> None:
    approved = recorded("3", policy=POLICY)
    approval_create(
        run=approved, user=member("alice", "approver"), decision="approve", comment="ships"
    )
    later_real = recorded("4")
    for number in range(8):
        scratch_run("3", number)
        scratch_run("4", number)
    assert figure_runs(viewer_client, approved) == {"3": approved.pk, "4": later_real.pk}

    # A release without an approval: its latest run judged with the standing evaluators.
    newest_real = recorded("4")
    assert figure_runs(viewer_client, approved)["4"] == newest_real.pk
    assert oloproof.keep_run(newest_real.pk, hidden=True)["hidden"] is True
    assert figure_runs(viewer_client, approved)["4"] == later_real.pk
    # Hiding an approved run from the history leaves the release's record as it is.
    oloproof.keep_run(approved.pk, hidden=True)
    assert figure_runs(viewer_client, approved)["3"] == approved.pk


def test_the_api_names_tags_hides_and_deletes_a_run(token_for) -> None:
    runner = member("rita", "runner")
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token_for(runner)}"}
    client = Client()
    kept, scratch = recorded("1"), scratch_run("1", 0)

    changed = client.patch(
        f"/api/runs/{scratch.pk}",
        json.dumps({"name": "debugging the parser", "tags": ["Debug", "parser"], "hidden": True}),
        content_type="application/json",
        **headers,
    )
    assert changed.status_code == 200, changed.content
    assert (changed.json()["name"], changed.json()["tags"]) == (
        "debugging the parser",
        ["debug", "parser"],
    )
    assert changed.json()["hidden"] is True
    listed = [item["id"] for item in client.get("/api/runs", **headers).json()["items"]]
    assert listed == [kept.pk]
    everything = client.get("/api/runs?hidden=true", **headers).json()["items"]
    assert [item["id"] for item in everything] == [scratch.pk, kept.pk]
    tagged = client.get("/api/runs?hidden=true&tag=debug", **headers).json()["items"]
    assert [item["id"] for item in tagged] == [scratch.pk]

    assert client.delete(f"/api/runs/{scratch.pk}", **headers).status_code == 204
    assert not Run.objects.filter(pk=scratch.pk).exists()
    deletion = Change.objects.get(action=Change.Action.RUN_DELETE)
    assert (deletion.actor_name, deletion.subject) == (
        "rita",
        f"run #{scratch.pk} of support-bot@1",
    )

    viewer = {"HTTP_AUTHORIZATION": f"Bearer {token_for(member('vic', 'viewer'))}"}
    assert client.delete(f"/api/runs/{kept.pk}", **viewer).status_code == 403
    assert (
        client.patch(
            f"/api/runs/{kept.pk}", '{"hidden": true}', content_type="application/json", **viewer
        ).status_code
        == 403
    )


def test_a_run_with_an_approval_decision_is_never_deleted(token_for, capsys) -> None:
    gated = recorded("2", policy=POLICY)
    approval_create(run=gated, user=member("alice", "approver"), decision="reject", comment="no")
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token_for(member('rita', 'runner'))}"}
    refused = Client().delete(f"/api/runs/{gated.pk}", **headers)
    assert refused.status_code == 409
    assert "has an approval decision" in refused.json()["detail"]
    assert "hide it instead" in refused.json()["detail"]
    assert main(["runs", "delete", str(gated.pk)]) == 3
    assert "cannot be deleted" in capsys.readouterr().err
    assert Run.objects.filter(pk=gated.pk).exists()
    assert not Change.objects.filter(action=Change.Action.RUN_DELETE).exists()


def test_the_command_names_tags_hides_lists_and_deletes(capsys) -> None:
    kept, scratch = recorded("1"), scratch_run("1", 0)
    assert main(["runs", "name", str(kept.pk), "the  baseline"]) == 0
    assert main(["runs", "tag", str(scratch.pk), "debug", "tmp"]) == 0
    assert main(["runs", "hide", str(scratch.pk)]) == 0
    capsys.readouterr()
    assert main(["runs", "list"]) == 0
    assert capsys.readouterr().out == f"#{kept.pk}  support-bot@1  the baseline\n"
    assert main(["runs", "list", "--hidden", "--tag", "debug"]) == 0
    assert capsys.readouterr().out == f"#{scratch.pk}  support-bot@1  [debug] [tmp]  (hidden)\n"
    assert main(["runs", "tag", str(scratch.pk), "not,one"]) == 3
    assert "a tag is one word" in capsys.readouterr().err
    assert main(["runs", "delete", str(scratch.pk)]) == 0
    assert capsys.readouterr().out == f"deleted run #{scratch.pk} of support-bot@1\n"
    assert [run["run_id"] for run in oloproof.list_runs(hidden=True)] == [kept.pk]
    assert Change.objects.get(action=Change.Action.RUN_DELETE).actor_name == "command line"
