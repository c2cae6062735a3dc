"""The winning texts of an optimization as a file, alike from the page's download, the REST
API and the library: JSON or YAML with the winner's release and its `components`; none
while the search has no winner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.test import Client

import oloproof
from oloproof_core import OloproofError
from oloproof_core.optimize import CandidateRecord
from runs.models import Optimization
from runs.writers.optimization_records import (
    candidate_record,
    optimization_conclude_record,
    optimization_create,
    optimization_progress_record,
)
from runs.writers.projects import project_default_ensure

pytestmark = pytest.mark.django_db

SEED = {"system_prompt": "You are a calculator.", "style": "Be brief."}
WINNER = {
    "system_prompt": "You are a calculator.\nAnswer with the number only.\n\n  Indented: 2 + 2",
    "style": "Be brief.",
}


def record(optimization: Optimization, index: int, texts: dict[str, str]) -> None:
    candidate_record(
        optimization_id=optimization.pk,
        record=CandidateRecord(
            index=index,
            digest=f"{index:064d}",
            version=f"1+opt{optimization.pk}.{index}",
            texts=texts,
            parents=(0,) if index else (),
            origin="reflection" if index else "seed",
            val={"metric": "exact", "estimate": 0.25 * (index + 1), "n": 4, "n_missing": 0},
            cost_usd=0.001,
            latency_ms=5.0,
        ),
    )


def running() -> Optimization:
    """An optimization as `oloproof optimize` leaves it mid-search: its seed recorded."""
    optimization = optimization_create(
        project=project_default_ensure(), config={"engine": "gepa"}, status="running"
    )
    optimization_progress_record(
        optimization_id=optimization.pk,
        status="running",
        progress={"engine": "gepa", "system": {"name": "calc", "version": "1"}},
    )
    record(optimization, 0, SEED)
    return optimization


def finished() -> Optimization:
    optimization = running()
    record(optimization, 1, WINNER)
    optimization_conclude_record(
        optimization_id=optimization.pk, status="succeeded", outcome={"winner": 1}
    )
    return optimization


def api(client: Client, token: str, path: str) -> Any:
    return client.get(f"/api{path}", HTTP_AUTHORIZATION=f"Bearer {token}")


def test_the_api_gives_the_winner_as_json_or_yaml(teammate: Any, token_for: Any) -> None:
    optimization = finished()
    client, token = Client(), token_for(teammate)

    response = api(client, token, f"/optimizations/{optimization.pk}/winner")
    assert response.status_code == 200
    winner = response.json()
    assert winner["system"] == "calc"
    assert winner["release"] == f"1+opt{optimization.pk}.1"
    assert winner["seed_release"] == f"1+opt{optimization.pk}.0"
    assert winner["components"] == WINNER

    as_yaml = api(client, token, f"/optimizations/{optimization.pk}/winner?format=yaml")
    assert as_yaml.status_code == 200
    assert as_yaml["Content-Type"].startswith("application/yaml")
    text = as_yaml.content.decode()
    assert "system_prompt: |-\n    You are a calculator.\n    Answer with the number only." in text
    assert yaml.safe_load(text) == winner

    refused = api(client, token, f"/optimizations/{optimization.pk}/winner?format=toml")
    assert refused.status_code == 400
    assert "json or yaml" in refused.json()["detail"]


def test_no_winner_while_the_search_runs(teammate: Any, token_for: Any) -> None:
    optimization = running()
    response = api(Client(), token_for(teammate), f"/optimizations/{optimization.pk}/winner")
    assert response.status_code == 404
    assert "has no winner yet (it is running)" in response.json()["detail"]

    client = Client()
    client.force_login(teammate)
    assert client.get(f"/optimizations/{optimization.pk}/winner.json").status_code == 404
    page = client.get(f"/optimizations/{optimization.pk}/").content.decode()
    assert 'id="optimization-system">calc<' in page
    assert f'data-live-url="/optimizations/{optimization.pk}/live"' in page
    assert "winner.json" not in page


def test_the_page_downloads_what_the_api_gives(teammate: Any, token_for: Any) -> None:
    optimization = finished()
    client = Client()
    client.force_login(teammate)

    page = client.get(f"/optimizations/{optimization.pk}/").content.decode()
    assert f'href="/optimizations/{optimization.pk}/winner.yaml"' in page
    assert "data-live-url" not in page  # finished: nothing left to follow
    assert "style: unchanged" in page
    download = client.get(f"/optimizations/{optimization.pk}/winner.yaml")
    assert download["Content-Disposition"] == (
        f'attachment; filename="calc-1+opt{optimization.pk}.1.components.yaml"'
    )
    from_api = api(client, token_for(teammate), f"/optimizations/{optimization.pk}/winner")
    assert yaml.safe_load(download.content) == from_api.json()
    as_json = client.get(f"/optimizations/{optimization.pk}/winner.json")
    assert json.loads(as_json.content) == from_api.json()


@pytest.mark.django_db(transaction=True)
def test_the_library_writes_the_same_file(tmp_path: Path) -> None:
    optimization = finished()

    winner = oloproof.winner_texts(optimization.pk, tmp_path / "components.yaml")

    assert winner["components"] == WINNER
    assert yaml.safe_load((tmp_path / "components.yaml").read_text(encoding="utf-8")) == winner
    with pytest.raises(OloproofError, match="no winner yet"):
        oloproof.winner_texts(running().pk)
    with pytest.raises(OloproofError, match="named by its id"):
        oloproof.winner_texts("latest")
