"""The compare page's case grid, its wording about missing pairs, and the exports of the
page and the API, on recorded evaluations."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from django.test import Client

from runs.models import Run
from tests.runs.conftest import compare_grid, member, record_evaluation

pytestmark = pytest.mark.django_db

REGRESSED = ["case_00001", "case_00009", "case_00013", "case_00017"]
MISSING = ["case_00000", "case_00005", "case_00010", "case_00015"]


def recorded(version: str, **kwargs: Any) -> Run:
    return Run.objects.get(pk=int(record_evaluation(20, version=version, **kwargs).run_id))


@pytest.fixture
def pair() -> tuple[Run, Run]:
    """A candidate wrong on cases 1, 9, 13 and 17 that fails outright on 0, 5, 10 and 15."""
    return recorded("1"), recorded("2", wrong_every=4, broken_every=5)


def shown_cases(response: Any) -> list[str]:
    html = response.content.decode()
    return [part.split('"', 1)[0] for part in html.split('<tr data-case="')[1:]]


def streamed(response: Any) -> str:
    assert response.streaming, "a large export must not be built in memory first"
    return b"".join(response.streaming_content).decode()


def test_the_grid_filters_and_orders_the_cases(
    viewer_client: Client, pair: tuple[Run, Run]
) -> None:
    assert len(shown_cases(compare_grid(viewer_client, pair))) == 20
    assert shown_cases(compare_grid(viewer_client, pair, show="regressed")) == REGRESSED
    assert shown_cases(compare_grid(viewer_client, pair, show="changed")) == REGRESSED
    assert shown_cases(compare_grid(viewer_client, pair, show="missing")) == MISSING
    # A failed case has another output (none) and an error: its output differs too.
    assert shown_cases(compare_grid(viewer_client, pair, show="output_changed")) == sorted(
        REGRESSED + MISSING
    )
    improved = compare_grid(viewer_client, pair, show="improved")
    assert shown_cases(improved) == []
    assert "No case matches this filter." in improved.content.decode()
    ordered = shown_cases(compare_grid(viewer_client, pair, order="change"))
    assert ordered[:4] == REGRESSED
    assert ordered[-4:] == MISSING, "cases without a change on both sides come last"
    on_one = compare_grid(viewer_client, pair, show="missing", metric="short_answer")
    assert shown_cases(on_one) == MISSING


def test_each_row_has_both_outputs_a_diff_the_values_and_links(
    viewer_client: Client, pair: tuple[Run, Run]
) -> None:
    baseline, candidate = pair
    html = compare_grid(viewer_client, pair, show="regressed").content.decode()
    row = html.split('<tr data-case="case_00001"')[1].split("</tr>")[0]
    assert f'href="/runs/{baseline.pk}/cases/case_00001"' in row
    assert f'href="/runs/{candidate.pk}/cases/case_00001"' in row
    assert "parcel #1" in row  # the input
    assert "<del>other</del><ins>refund</ins>" in row
    assert "1.000 → 0.000" in row
    assert "(-1.000)" in row
    missing = compare_grid(viewer_client, pair, show="missing").content.decode()
    assert "RuntimeError: backend down on case 0" in missing


def test_the_wording_names_the_missing_pairs_behind_p(
    viewer_client: Client, pair: tuple[Run, Run]
) -> None:
    text = compare_grid(viewer_client, pair).content.decode()
    assert "The difference is over the 16 cases with a value in both runs: 4 regressed" in text
    assert "12 unchanged" in text
    assert "over all 20 cases: 4 missing from the candidate are not counted" in text
    assert "The 4 pairs with a missing side could outweigh the net change (4 cases)" in text
    assert "No case with a value in both runs changed" in text  # short_answer
    assert "only 7 clusters" in text  # the few-cluster warning of the estimate


def test_q_values_follow_the_multiplicity_choice(
    viewer_client: Client, pair: tuple[Run, Run]
) -> None:
    with_fdr = compare_grid(viewer_client, pair).content.decode()
    assert "Benjamini–Hochberg adjusted p-value across the 2 metrics" in with_fdr
    plain = compare_grid(viewer_client, pair, fdr="none").content.decode()
    assert "Flags on plain p-values (no multiplicity correction)" in plain
    assert with_fdr.count('class="num q-value"') == 2


def test_a_filter_not_offered_is_a_clear_400(viewer_client: Client, pair: tuple[Run, Run]) -> None:
    response = compare_grid(viewer_client, pair, show="worse")
    assert response.status_code == 400
    assert "show must be one of all, changed, regressed, improved, missing, output_changed" in (
        response.content.decode()
    )
    response = compare_grid(viewer_client, pair, metric="tone")
    assert response.status_code == 400
    assert "no metric &#x27;tone&#x27; in both runs" in response.content.decode()


def test_the_page_exports_the_grid_as_csv_and_jsonl(
    viewer_client: Client, pair: tuple[Run, Run]
) -> None:
    baseline, candidate = pair
    query = {"baseline": baseline.pk, "candidate": candidate.pk, "show": "regressed"}
    response = viewer_client.get("/compare/export", {**query, "format": "csv"})
    assert response["Content-Type"].startswith("text/csv")
    name = f"compare-{baseline.pk}-vs-{candidate.pk}.csv"
    assert response["Content-Disposition"] == f'attachment; filename="{name}"'
    rows = list(csv.DictReader(io.StringIO(streamed(response))))
    assert [row["case_id"] for row in rows] == REGRESSED
    assert json.loads(rows[0]["candidate_output"]) == {"label": "refund"}
    assert json.loads(rows[0]["expected"]) == {"label": "other"}
    assert rows[0]["exact_label change"] == "-1.0"
    assert rows[0]["short_answer change"] == "0.0"
    response = viewer_client.get("/compare/export", {**query, "show": "missing", "format": "jsonl"})
    records = [json.loads(line) for line in streamed(response).splitlines()]
    assert [record["case_id"] for record in records] == MISSING
    assert records[0]["candidate"]["error"] == "RuntimeError: backend down on case 0"
    assert viewer_client.get("/compare/export", {**query, "format": "xlsx"}).status_code == 400


def test_the_api_pages_and_exports_the_cases(viewer_client: Client, pair: tuple[Run, Run]) -> None:
    baseline, candidate = pair
    query = {"baseline": baseline.pk, "candidate": candidate.pk, "order": "change"}
    page = viewer_client.get("/api/compare/cases", {**query, "limit": 3, "offset": 1}).json()
    assert page["count"] == 20
    assert [item["case_id"] for item in page["items"]] == REGRESSED[1:4]
    item = page["items"][0]
    assert item["metrics"]["exact_label"] == {"baseline": 1.0, "candidate": 0.0, "change": -1.0}
    assert item["baseline"]["output"] == {"label": "other"}
    assert item["candidate_url"] == f"/runs/{candidate.pk}/cases/case_00009"
    response = viewer_client.get(
        "/api/compare/export", {**query, "format": "jsonl", "show": "changed"}
    )
    records = [json.loads(line) for line in streamed(response).splitlines()]
    assert [record["case_id"] for record in records] == REGRESSED
    bad = viewer_client.get("/api/compare/cases", {**query, "show": "worse"})
    assert bad.status_code in (400, 422)
    compared = viewer_client.get("/api/compare", query).json()["metrics"][0]
    assert compared["q_value"] is not None
    assert "4 missing from the candidate" in " ".join(compared["explanation"])


def test_someone_outside_the_project_sees_neither_grid_nor_export(pair: tuple[Run, Run]) -> None:
    baseline, candidate = pair
    outsider = Client()
    outsider.force_login(member("mallory", None))
    query = {"baseline": baseline.pk, "candidate": candidate.pk}
    assert outsider.get("/compare/", query).status_code == 404
    assert outsider.get("/compare/export", query).status_code == 404
    assert outsider.get("/api/compare/cases", query).status_code == 404
    assert outsider.get("/api/compare/export", query).status_code == 404


COLUMN_SOURCES = ("kept by the recording", "read from the verdicts")


def columns_from(source: str, runs: tuple[Run, ...]) -> None:
    """Leave the runs' kept value columns, or drop them (a run recorded before they were kept)."""
    from metrics.models import RunValueColumns

    kept = RunValueColumns.objects.filter(run__in=runs)
    assert kept.count() == len(runs), "the recording keeps every concluded run's columns"
    if source == COLUMN_SOURCES[1]:
        kept.delete()


@pytest.mark.parametrize("source", COLUMN_SOURCES)
def test_the_column_read_gives_the_figures_of_whole_results(
    pair: tuple[Run, Run], source: str
) -> None:
    """The page reads values as columns; the engine on whole results must agree exactly."""
    from oloproof import compare
    from runs.selectors.comparison import runs_compare
    from runs.selectors.results import run_result

    baseline, candidate = pair
    columns_from(source, pair)
    whole = compare(run_result(run=baseline), run_result(run=candidate))
    assert runs_compare(baseline=baseline, candidate=candidate).to_dict() == whole.to_dict()


@pytest.mark.parametrize("source", COLUMN_SOURCES)
def test_the_column_read_agrees_on_sub_scores_and_clusters_too(source: str) -> None:
    from pathlib import Path

    from oloproof import compare, evaluate, system
    from oloproof.evaluators import MetricFile
    from runs.selectors.comparison import runs_compare
    from runs.selectors.results import run_result
    from runs.store import DjangoStore

    seed_metrics = Path(__file__).parents[2] / "core/judging/metric_files/seed_metrics"
    metric = seed_metrics / "multiple_checks/metric.py"
    rows = [
        {
            "id": f"doc_{i}",
            "input": {"text": '{"name": "Ada", "date": "1843"}' if i % 3 else '{"name": "Ada"}'},
            "expected": {"fields": ["name", "date"]},
            "cluster": f"source_{i % 4}",
        }
        for i in range(12)
    ]

    def echo(version: str, broken: int) -> Any:
        @system(name="echo", version=version)
        def answer(case: dict[str, Any]) -> str:
            if broken and case["text"].endswith("}") and len(case["text"]) < 20:
                return case["text"][:-1]
            return str(case["text"])

        return answer

    runs = [
        Run.objects.get(
            pk=int(
                evaluate(
                    echo(version, broken), rows, [MetricFile(metric)], store=DjangoStore()
                ).run_id
            )
        )
        for version, broken in (("1", 0), ("2", 1))
    ]
    whole = compare(run_result(run=runs[0]), run_result(run=runs[1]))
    assert [item.metric for item in whole.metrics] == [
        "multiple_checks",
        "multiple_checks.format",
        "multiple_checks.fields",
    ]
    assert whole.metric("multiple_checks.format").regressed
    assert whole.n_clusters == 4
    columns_from(source, tuple(runs))
    assert runs_compare(baseline=runs[0], candidate=runs[1]).to_dict() == whole.to_dict()


def test_the_diff_escapes_what_the_outputs_contain() -> None:
    from runs.views.text_diff import DIFF_TOKENS, inline_diff

    marked = str(inline_diff('<img src=x onerror="alert(1)"> old', "<script>alert(2)</script> new"))
    assert "<script>" not in marked
    assert "<img" not in marked
    assert "&lt;/script" in marked
    assert "<del>old</del><ins>new</ins>" in marked
    long = " ".join(["word"] * (DIFF_TOKENS + 10))
    assert f"diff of the first {DIFF_TOKENS} words" in str(inline_diff(long, long + " more"))
