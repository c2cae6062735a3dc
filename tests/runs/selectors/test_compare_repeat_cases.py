"""The compare grid and the API on two recorded runs with repeats: each case against its
own noise, filtered with `?cases=`."""

from __future__ import annotations

import typing

import pytest
from django.test import Client

from oloproof_core.results.compare import REPEAT_FILTERS
from runs.api.compare import ComparedCasesQuery
from runs.models import Run
from tests.runs.conftest import compare_grid, record_evaluation
from tests.runs.selectors.test_compare_grid import shown_cases

pytestmark = pytest.mark.django_db

REGRESSED = ["case_00001", "case_00005", "case_00009", "case_00013", "case_00017"]


def recorded(version: str, **kwargs: typing.Any) -> Run:
    found = record_evaluation(20, version=version, repeats=5, **kwargs)
    return Run.objects.get(pk=int(found.run_id))


@pytest.fixture
def pair() -> tuple[Run, Run]:
    """A candidate wrong, on every repeat, on cases 1, 5, 9, 13 and 17."""
    return recorded("1"), recorded("2", wrong_every=4)


def test_the_grid_keeps_the_repeats_of_the_cases_regressed_beyond_noise(
    viewer_client: Client, pair: tuple[Run, Run]
) -> None:
    page = compare_grid(viewer_client, pair, cases="regressed", metric="exact_label")
    assert page.status_code == 200
    assert shown_cases(page) == [f"{case}#r{j}" for case in REGRESSED for j in range(1, 6)]
    html = page.content.decode()
    assert 'data-repeat-status="regressed"' in html
    assert "5/5 → 0/5" in html
    assert "Regressed beyond noise (5)" in html
    assert shown_cases(compare_grid(viewer_client, pair, cases="flaky")) == []


def test_a_filter_not_offered_is_a_bad_request(
    viewer_client: Client, pair: tuple[Run, Run]
) -> None:
    page = compare_grid(viewer_client, pair, cases="worse")
    assert page.status_code == 400
    assert "cases must be one of all, regressed, improved, flaky" in page.content.decode()


def test_the_api_offers_the_engines_filters() -> None:
    field = ComparedCasesQuery.model_fields["cases"]
    assert typing.get_args(field.annotation) == REPEAT_FILTERS
