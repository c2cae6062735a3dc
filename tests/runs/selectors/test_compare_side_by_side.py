"""Several runs side by side through the REST API, the library and `oloproof compare A B
C`: the same pairs, figures and counts as the dashboard's page, the baseline pre-filled
the same way, and runs of another dataset refused (exit code 3 for the command)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

import oloproof
from oloproof.cli import main
from runs.models import Run
from runs.services import approval_create
from tests.runs.api.test_api import bearer
from tests.runs.conftest import member, record_evaluation

pytestmark = pytest.mark.django_db

POLICY: dict[str, Any] = {"version": 1, "rules": [{"metric": "exact_label", "min": 0.5}]}


@pytest.fixture
def three() -> list[int]:
    """Releases 1, 2 and 3 of one dataset; 3 answers wrong on cases 1, 5, 9, …"""
    return [
        int(record_evaluation(20, version="1").run_id),
        int(record_evaluation(20, version="2", policy=POLICY).run_id),
        int(record_evaluation(20, version="3", wrong_every=4).run_id),
    ]


def side_by_side(client: Client, token: str, *runs: int, **extra: Any) -> Any:
    query = "&".join([f"runs={run}" for run in runs] + [f"{k}={v}" for k, v in extra.items()])
    return client.get(f"/api/compare/runs?{query}", **bearer(token))


def test_the_api_compares_each_run_with_the_earliest_release_or_the_approved_one(
    three, viewer, token_for
) -> None:
    first, second, third = three
    client, token = Client(), token_for(viewer)
    answer = side_by_side(client, token, third, second, first)
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["baseline_run"] == first
    assert [pair["candidate_run"] for pair in body["pairs"]] == [third, second]
    worse = next(m for m in body["pairs"][0]["metrics"] if m["metric"] == "exact_label")
    assert worse["difference"] == pytest.approx(-0.25)
    assert worse["regressed"] == ["case_00001", "case_00005", "case_00009", "case_00013",
                                  "case_00017"]  # fmt: skip
    assert (worse["n_pairs"], worse["n_complete"]) == (20, 20)
    assert worse["n_clusters"] is not None
    # Each pair is the two-run comparison's own figure.
    alone = client.get(f"/api/compare?baseline={first}&candidate={third}", **bearer(token))
    assert alone.json()["metrics"] == body["pairs"][0]["metrics"]

    approval_create(
        run=Run.objects.get(pk=second), user=member("alice", "approver"), decision="approve"
    )
    approved = side_by_side(client, token, first, second, third).json()
    assert approved["baseline_run"] == second
    chosen = side_by_side(client, token, first, third, baseline=third).json()
    assert [pair["candidate_run"] for pair in chosen["pairs"]] == [first]


def test_the_api_refuses_other_datasets_too_many_runs_and_runs_it_may_not_see(
    three, viewer, token_for
) -> None:
    client, token = Client(), token_for(viewer)
    other = int(record_evaluation(10, version="4").run_id)
    refused = side_by_side(client, token, three[0], other)
    assert refused.status_code == 400
    assert "different datasets" in refused.json()["detail"]
    assert side_by_side(client, token, *range(1, 10)).status_code == 422
    assert side_by_side(client, token, three[0], 99999).status_code == 404
    alone = side_by_side(client, token, three[0])
    assert alone.status_code == 400
    assert "no baseline to compare with" in alone.json()["detail"]


@pytest.fixture
def recording(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command reads runs from the project's store, as it does outside the tests."""
    monkeypatch.setenv("OLOPROOF_RECORD", "1")


def test_the_command_and_the_library_compare_three_runs_as_the_api_does(
    three, recording, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second, third = (str(run) for run in three)
    assert main(["compare", first, second, third]) == 0
    out = capsys.readouterr().out
    assert out.startswith("2 runs against support-bot@1 (run ")
    assert "support-bot@3" in out
    assert "support-bot@2" in out
    assert "20 of 20 pairs complete" in out
    assert main(["compare", first, second, third, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    library = oloproof.compare_side_by_side(first, [second, third]).to_dict()
    assert printed == json.loads(json.dumps(library))
    exact = next(m for m in printed["pairs"][1]["metrics"] if m["metric"] == "exact_label")
    assert exact["difference"] == pytest.approx(-0.25)


def test_the_command_exits_3_for_runs_of_different_datasets_or_too_many(
    three, recording, capsys: pytest.CaptureFixture[str]
) -> None:
    other = record_evaluation(10, version="4").run_id
    assert main(["compare", str(three[0]), str(three[1]), other]) == 3
    err = capsys.readouterr()
    assert "evaluated on different datasets" in err.err
    assert err.out == ""
    assert main(["compare", *[str(three[0])] * 9]) == 3
    assert "compare at most 8 runs at once" in capsys.readouterr().err
    assert main(["compare", *(str(run) for run in three), "--export", "x.csv"]) == 3
    assert "name one candidate" in capsys.readouterr().err


def test_runs_of_one_dataset_at_different_repeat_counts_pair_case_means_everywhere(
    viewer, token_for, recording
) -> None:
    """The API, the library and the command take runs repeated 2 and 3 times as the same
    cases, each pair a case's means over both runs' repeats."""
    twice = int(record_evaluation(8, repeats=2, isolation="thread", wrong_every=4).run_id)
    thrice = int(record_evaluation(8, version="2", repeats=3, isolation="thread").run_id)
    client, token = Client(), token_for(viewer)
    answer = side_by_side(client, token, thrice, twice)
    assert answer.status_code == 200, answer.content
    pair = answer.json()["pairs"][0]
    assert (pair["paired"], pair["repeats"]) == ("case means", {"baseline": 2, "candidate": 3})
    assert (pair["repeats_only_in_baseline"], pair["repeats_only_in_candidate"]) == (0, 8)
    exact = next(m for m in pair["metrics"] if m["metric"] == "exact_label")
    assert "each case's mean over each run's own repeats" in exact["method"]
    assert (exact["n_pairs"], exact["difference"]) == (8, pytest.approx(0.25))
    library = oloproof.compare_side_by_side(str(twice), [str(thrice)]).to_dict()
    same = next(m for m in library["pairs"][0]["metrics"] if m["metric"] == "exact_label")
    shared = ("difference", "interval", "p_value", "method", "n_pairs", "regressed")
    assert {key: same[key] for key in shared} == {key: exact[key] for key in shared}
    assert main(["compare", str(twice), str(thrice)]) == 0
