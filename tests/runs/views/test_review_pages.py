"""The metric page and the review queue: what they show, labelling from the queue, what is
refused (and that nothing is stored then), and a queue whose queries do not grow with the run."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

import oloproof
from runs.models import Label, Run
from runs.selectors.labels import labelled_metric
from runs.store import DjangoStore
from runs.writers.labels import LabelRow, import_labels
from tests.support.case_runs import ticket_run
from tests.support.fake_openai import FakeOpenAI
from tests.support.judged_runs import CURT, GREETS, judged_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def run() -> Run:
    return ticket_run()


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def page(response: Any) -> str:
    return response.content.decode()


def drawn_case(html: str) -> tuple[str, str]:
    """(draw position, case id) of the case the review page shows."""
    position = re.search(r'id="draw-position">(\d+)<', html)
    case = re.search(r'name="case_id" value="([^"]+)"', html) or re.search(
        r'id="draw-case"[^>]*><bdi>([^<]+)<', html
    )
    assert position, html
    assert case, html
    return position.group(1), case.group(1)


def test_a_model_judged_metric_assumes_the_judge_until_a_draw_is_labelled(
    models_on: FakeOpenAI, tmp_path: Path, teammate: User
) -> None:
    run = judged_run(models_on, tmp_path)
    client = signed_in(teammate)
    metric = page(client.get(f"/runs/{run.pk}/metrics/tone/"))
    assert "This figure assumes the judge is right." in metric
    assert 'id="no-labels"' in metric
    assert f'href="/runs/{run.pk}/review/tone/"' in metric
    run_page = page(client.get(f"/runs/{run.pk}/"))
    assert f'href="/runs/{run.pk}/metrics/tone/"' in run_page
    assert "assumes the judge is right" in run_page

    queue = page(client.get(f"/runs/{run.pk}/review/tone/"))
    _, case_id = drawn_case(queue)
    response = client.post(f"/runs/{run.pk}/review/tone/", {"case_id": case_id, "value": "1"})
    assert response.status_code == 303

    metric = page(client.get(f"/runs/{run.pk}/metrics/tone/"))
    assert "This figure assumes the judge is right." not in metric
    assert re.search(r'id="combined-interval">\[\d\.\d{3}, \d\.\d{3}\]<', metric)
    # Draws are made with replacement: the next ones may land on the labelled case again.
    assert re.search(r'id="labels-used">[1-9]\d* <', metric)
    assert "1 case labelled in all" in metric
    assert 'id="calibration-figures"' in metric
    assert 'data-figure="mean_abs_difference"' in metric
    run_page = page(client.get(f"/runs/{run.pk}/"))
    assert "assumes the judge is right" not in run_page
    assert re.search(r"[1-9]\d* labels?<", run_page)


def test_the_queue_shows_the_case_beside_the_judge_and_blind_hides_the_judge(
    models_on: FakeOpenAI, tmp_path: Path, teammate: User
) -> None:
    run = judged_run(models_on, tmp_path)
    client = signed_in(teammate)
    shown = page(client.get(f"/runs/{run.pk}/review/tone/"))
    position, case_id = drawn_case(shown)
    number = int(case_id.split("-")[1])
    assert f"question {number}" in shown
    assert f"answer {number}" in shown
    assert 'id="judge-verdict"' in shown
    assert (GREETS if number % 3 else CURT) in shown
    assert 'href="?blind=1"' not in shown  # the toggle is a full link to the same queue
    assert f'href="/runs/{run.pk}/review/tone/?blind=1"' in shown

    blind = page(client.get(f"/runs/{run.pk}/review/tone/", {"blind": "1"}))
    assert drawn_case(blind) == (position, case_id)
    assert 'id="judge-verdict"' not in blind
    assert GREETS not in blind
    assert CURT not in blind
    assert f'href="/runs/{run.pk}/review/tone/"' in blind  # show the judge again
    assert 'type="number" name="value"' in blind


def test_a_post_labels_the_case_and_moves_to_the_next_draw(run: Run, teammate: User) -> None:
    client = signed_in(teammate)
    url = f"/runs/{run.pk}/review/exact_label/"
    first_position, first_case = drawn_case(page(client.get(url)))
    response = client.post(
        url + "?blind=1",
        {"case_id": first_case, "position": first_position, "value": "0", "note": "off"},
    )
    assert response.status_code == 303
    assert response["Location"] == url + "?blind=1"
    label = Label.objects.get()
    assert (label.criterion, label.value, label.note, label.author_name) == (
        "exact_label",
        0.0,
        "off",
        "bob",
    )
    after = page(client.get(response["Location"]))
    position, case_id = drawn_case(after)
    assert int(position) > int(first_position)
    assert case_id != first_case
    assert re.search(r'id="draws-labelled">[1-9]\d*<', after)  # drawn with replacement
    assert re.search(r'id="labels-total">1<', after)
    assert re.search(r'id="progress-interval">\[', after)


def test_skipping_shows_the_next_draw_and_labelling_after_a_skip_goes_on(
    run: Run, teammate: User
) -> None:
    client = signed_in(teammate)
    url = f"/runs/{run.pk}/review/exact_label/"
    first = page(client.get(url))
    first_position, first_case = drawn_case(first)
    skip = re.search(r'id="review-skip" class="[^"]*" href="([^"]+)"', first)
    assert skip
    assert skip.group(1) == f"{url}?after={first_position}"
    second_position, second_case = drawn_case(page(client.get(skip.group(1))))
    assert int(second_position) > int(first_position)
    while second_case == first_case:  # drawn with replacement: the same case may come again
        second_position, second_case = drawn_case(page(client.get(url, {"after": second_position})))
    response = client.post(
        f"{url}?after={first_position}",
        {"case_id": second_case, "position": second_position, "value": "1"},
    )
    assert response["Location"] == f"{url}?after={second_position}"
    # Without the skip the queue goes back to the first unlabelled draw.
    assert drawn_case(page(client.get(url)))[0] == first_position


def test_a_score_metric_takes_a_number_within_its_range(run: Run, teammate: User) -> None:
    client = signed_in(teammate)
    url = f"/runs/{run.pk}/review/reply_quality/"
    shown = page(client.get(url))
    assert 'data-score-min="0.0" data-score-max="1.0"' in shown
    assert 'type="number" name="value"' in shown
    position, case_id = drawn_case(shown)
    response = client.post(url, {"case_id": case_id, "position": position, "value": "0.75"})
    assert response.status_code == 303
    assert Label.objects.get().value == 0.75


@pytest.mark.parametrize(
    ("metric", "value", "message"),
    [
        ("exact_label", "maybe", "give pass or fail"),
        ("reply_quality", "1.5", "give a number from 0 to 1"),
        ("reply_quality", "", "give a number from 0 to 1"),
    ],
)
def test_a_bad_value_is_a_400_page_naming_it_and_nothing_is_stored(
    run: Run, teammate: User, metric: str, value: str, message: str
) -> None:
    client = signed_in(teammate)
    url = f"/runs/{run.pk}/review/{metric}/"
    position, case_id = drawn_case(page(client.get(url)))
    response = client.post(
        url, {"case_id": case_id, "position": position, "value": value, "note": "kept text"}
    )
    assert response.status_code == 400
    shown = page(response)
    assert 'id="label-error"' in shown
    assert message in shown
    assert drawn_case(shown) == (position, case_id)
    assert "kept text" in shown
    assert Label.objects.count() == 0


def test_a_viewer_reads_the_queue_without_a_form_and_cannot_post(
    run: Run, viewer: User, outsider: User
) -> None:
    client = signed_in(viewer)
    url = f"/runs/{run.pk}/review/exact_label/"
    shown = page(client.get(url))
    position, case_id = drawn_case(shown)
    assert 'id="label-form"' not in shown
    assert 'id="read-only"' in shown
    response = client.post(url, {"case_id": case_id, "position": position, "value": "1"})
    assert response.status_code == 403
    assert signed_in(outsider).get(url).status_code == 404
    assert signed_in(outsider).post(url, {"case_id": case_id, "value": "1"}).status_code == 404
    assert Label.objects.count() == 0


def test_the_metric_page_says_how_many_labels_reach_a_width(run: Run, teammate: User) -> None:
    client = signed_in(teammate)
    url = f"/runs/{run.pk}/metrics/exact_label/"
    assert "Label the first drawn case" in page(client.get(url, {"width": "0.1"}))
    queue = f"/runs/{run.pk}/review/exact_label/"
    for _ in range(3):
        position, case_id = drawn_case(page(client.get(queue)))
        client.post(queue, {"case_id": case_id, "position": position, "value": "1"})
    unasked = page(client.get(url))  # half the current width, unless asked
    half = re.search(r'name="width" step="any" min="0" value="([^"]+)"', unasked)
    assert half
    assert 0 < float(half.group(1)) <= 0.5
    assert 'id="width-answer"' in unasked
    shown = page(client.get(url, {"width": "0.3"}))
    answer = r'id="width-answer">(About \d+ more labelled draws?|Labels alone|The combined)'
    assert re.search(answer, shown)
    refused = page(client.get(url, {"width": "wide"}))
    assert "The width must be a positive number such as 0.1; &#x27;wide&#x27; is not." in refused


def test_a_sub_score_and_an_unknown_metric(run: Run, teammate: User) -> None:
    client = signed_in(teammate)
    assert client.get(f"/runs/{run.pk}/metrics/tone/").status_code == 404
    assert client.get(f"/runs/{run.pk}/review/tone/").status_code == 404
    shown = page(client.get(f"/runs/{run.pk}/metrics/reply_quality/"))
    assert "This figure assumes the judge is right." not in shown  # no model judges it


def _queue_queries(client: Client, run: Run, labelled: int) -> int:
    url = f"/runs/{run.pk}/review/exact_label/"
    for _ in range(labelled):
        position, case_id = drawn_case(page(client.get(url)))
        client.post(url, {"case_id": case_id, "position": position, "value": "1"})
    page(client.get(url))  # the run's label keys are kept by now
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries)


def test_the_queue_reads_as_many_queries_for_500_cases_as_for_50(teammate: User) -> None:
    client = signed_in(teammate)
    small, large = ticket_run(50), ticket_run(500)
    assert _queue_queries(client, small, 3) == _queue_queries(client, large, 3)


def test_two_people_on_one_case_show_how_far_they_agree(
    run: Run, teammate: User, approver: User
) -> None:
    url = f"/runs/{run.pk}/review/exact_label/"
    for person, value in ((teammate, "1"), (approver, "0")):
        response = signed_in(person).post(url, {"case_id": "ticket-02", "value": value})
        assert response.status_code == 303
    shown = page(signed_in(teammate).get(f"/runs/{run.pk}/metrics/exact_label/"))
    assert 'id="people-figures"' in shown
    assert "On 1 case two people labelled." in shown
    agreement = re.search(r'<tr data-figure="agreement">.*?</tr>', shown, re.S)
    assert agreement
    assert '<td class="num">0.000</td>' in agreement.group(0)
    # The case itself is listed first, with both people's labels and their disagreement.
    rows = re.search(r'<table class="grid" id="labelled-cases-table">.*?</table>', shown, re.S)
    assert rows
    first = re.search(r"<tbody>\s*<tr[^>]*>(.*?)</tr>", rows.group(0), re.S)
    assert first
    assert "ticket-02" in first.group(1)
    assert "people disagree" in first.group(1)
    assert 'id="people-disagree-count">1<' in shown


def table_rows() -> dict[str, int]:
    return {model._meta.label: model.objects.count() for model in apps.get_models()}


def test_labels_imported_first_count_and_reading_the_queue_writes_nothing(
    run: Run, teammate: User
) -> None:
    # Every case the system answered (ticket-05 failed) labelled from a file, before
    # anyone opened the queue: the figure is the people's, exact.
    rows = [
        LabelRow(line, f"ticket-{n:02d}", "exact_label", "fail" if n % 3 == 0 else "pass")
        for line, n in enumerate((n for n in range(12) if n != 5), start=2)
    ]
    assert import_labels(teammate, run.pk, rows) == 11
    figure = labelled_metric(run.pk, "exact_label")
    assert figure is not None
    assert figure.known
    assert figure.estimate == 7 / 11  # people fail tickets 0, 3, 6 and 9
    assert (figure.interval.lower, figure.interval.upper) == (7 / 12, 8 / 12)
    policy = {"version": 1, "rules": [{"metric": "exact_label", "min": 0.5}]}
    decided = oloproof.gate(run.pk, policy, store=DjangoStore()).to_dict()
    assert "people's labels of every case" in decided["rules"][0]["figures"]["interval_source"]
    client = signed_in(teammate)
    before = table_rows()
    queue = f"/runs/{run.pk}/review/exact_label/"
    api = f"/api/runs/{run.pk}/review/exact_label/next"
    for path in (queue, queue + "?blind=1", queue + "?after=3", api, api + "?after=3"):
        assert client.get(path).status_code == 200
    shown = page(client.get(queue))
    assert "Every case the judge has a verdict on is labelled" in shown
    assert 'id="cases-left">0<' in shown
    metric = page(client.get(f"/runs/{run.pk}/metrics/exact_label/"))
    assert "Known from people's labels" in metric
    assert "only the 1 missing case keeps an interval open" in metric
    assert table_rows() == before, "reading the queue wrote rows"
    assert labelled_metric(run.pk, "exact_label") == figure
    assert oloproof.gate(run.pk, policy, store=DjangoStore()).to_dict() == decided
