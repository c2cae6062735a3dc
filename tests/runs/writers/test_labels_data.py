"""People's labels: who may label, what is refused (and that nothing stored changes), reuse
by later runs with the same output, disagreement, and the review queue's draws (computed
from the run's seed and cases, never stored)."""

from __future__ import annotations

from itertools import islice
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from oloproof import system
from oloproof_core.labels import review_draws
from runs.access import LOCAL
from runs.errors import InvalidRequestError, NotFoundError, NotPermittedError
from runs.models import CaseResult, Dataset, DatasetCase, Label, Run
from runs.selectors.labels import (
    labelled_metric,
    people_agreement,
    review_queue,
    run_calibration,
    run_labels,
    truth_by_case,
)
from runs.writers.labels import LabelRow, LabelRowsError, import_labels, save_label
from tests.support.case_runs import ticket_bot, ticket_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def run() -> Run:
    return ticket_run()


def stored() -> list[tuple[Any, ...]]:
    return list(
        Label.objects.order_by("id").values_list(
            "criterion", "key", "author_name", "value", "note", "updated_at"
        )
    )


def test_a_runner_labels_and_saving_again_edits_their_label(run, teammate) -> None:
    first = save_label(teammate, run.pk, "ticket-03", "exact_label", "fail", note="wrong label")
    assert (first.value, first.note, first.author_name) == (0.0, "wrong label", "bob")
    again = save_label(teammate, run.pk, "ticket-03", "exact_label", "pass")
    assert Label.objects.count() == 1
    assert (again.pk, again.value, again.note) == (first.pk, 1.0, "")
    assert again.updated_at >= first.updated_at
    score = save_label(teammate, run.pk, "ticket-03", "reply_quality", 0.5)
    assert score.value == 0.5
    assert truth_by_case(run, "exact_label") == {"ticket-03": 1.0}


BAD_LABELS = [
    ("ticket-01", "exact_label", "maybe", InvalidRequestError, "give pass or fail"),
    ("ticket-01", "exact_label", 2, InvalidRequestError, "not a pass/fail value"),
    ("ticket-01", "reply_quality", 1.5, InvalidRequestError, "give a number from 0 to 1"),
    ("ticket-01", "reply_quality", "nan", InvalidRequestError, "not a score"),
    ("ticket-99", "exact_label", "pass", NotFoundError, "has no case 'ticket-99'"),
    (
        "ticket-05",
        "exact_label",
        "pass",
        InvalidRequestError,
        r"failed \(RuntimeError\): it has no output to label",
    ),
    (
        "ticket-01",
        "tone",
        "pass",
        NotFoundError,
        r"no metric 'tone' \(its metrics: exact_label, reply_quality\)",
    ),
]


def test_bad_labels_are_refused_and_nothing_changes(run, teammate) -> None:
    save_label(teammate, run.pk, "ticket-01", "exact_label", "pass", note="kept")
    before = stored()
    for case, metric, value, error, message in BAD_LABELS:
        with pytest.raises(error, match=message):
            save_label(teammate, run.pk, case, metric, value)
    assert stored() == before


def test_viewers_outsiders_and_the_nameless_process_cannot_label(run, viewer, outsider) -> None:
    with pytest.raises(NotPermittedError, match="needs the runner role"):
        save_label(viewer, run.pk, "ticket-01", "exact_label", "pass")
    with pytest.raises(NotFoundError, match=f"no run with id {run.pk}"):
        save_label(outsider, run.pk, "ticket-01", "exact_label", "pass")
    with pytest.raises(NotPermittedError, match="signed-in account"):
        save_label(LOCAL, run.pk, "ticket-01", "exact_label", "pass")
    with pytest.raises(NotFoundError):
        import_labels(outsider, run.pk, [LabelRow(2, "ticket-01", "exact_label", "pass")])
    assert Label.objects.count() == 0
    made = save_label(
        LOCAL, run.pk, "ticket-01", "exact_label", "1", author_name="eve@command-line"
    )
    assert made.author is None
    assert made.author_name == "eve@command-line"


def test_an_import_is_saved_whole_or_refused_whole_naming_each_bad_line(run, teammate) -> None:
    save_label(teammate, run.pk, "ticket-00", "exact_label", "pass", note="first word")
    before = stored()
    rows = [
        LabelRow(2, "ticket-00", None, "fail", "changed my mind"),
        LabelRow(3, "ticket-01", "reply_quality", "0.25"),
        LabelRow(4, "ticket-05", None, "pass"),
        LabelRow(5, "ticket-02", None, "7"),
        LabelRow(6, "ticket-77", None, "pass"),
        LabelRow(7, "ticket-02", "tone", "pass"),
        LabelRow(8, "ticket-01", "reply_quality", "0.5"),
    ]
    with pytest.raises(LabelRowsError) as refused:
        import_labels(teammate, run.pk, rows, default_criterion="exact_label")
    assert [line for line, _ in refused.value.problems] == [4, 5, 6, 7, 8]
    text = str(refused.value)
    assert "line 4: case 'ticket-05' of run" in text
    assert "failed (RuntimeError)" in text
    assert "line 5: value '7' is not a pass/fail value" in text
    assert "line 6: run" in text
    assert "has no case 'ticket-77'" in text
    assert "line 7: run" in text
    assert "no metric 'tone'" in text
    assert "line 8: case 'ticket-01' is labelled on 'reply_quality' again (first at line 3)" in text
    assert stored() == before, "a refused import changed stored labels"
    saved = import_labels(teammate, run.pk, rows[:2], default_criterion="exact_label")
    assert saved == 2
    assert truth_by_case(run, "exact_label") == {"ticket-00": 0.0}
    assert truth_by_case(run, "reply_quality") == {"ticket-01": 0.25}
    with pytest.raises(InvalidRequestError, match="no metric: fill the metric column"):
        import_labels(teammate, run.pk, [LabelRow(2, "ticket-01", None, "pass")])


def test_a_later_run_reuses_a_label_only_where_its_output_is_the_same(run, teammate) -> None:
    for case_id in ("ticket-01", "ticket-02"):
        save_label(teammate, run.pk, case_id, "exact_label", "pass")
    same = ticket_run(12, ticket_bot)
    assert truth_by_case(same, "exact_label") == {"ticket-01": 1.0, "ticket-02": 1.0}

    @system(name="ticket-bot", version="2")
    def changed(case: dict[str, Any]) -> dict[str, str]:
        answer = ticket_bot(case)
        if case["question"].endswith(" 2"):
            answer["reply"] = "A different reply"
        return answer

    assert truth_by_case(ticket_run(12, changed), "exact_label") == {"ticket-01": 1.0}


def test_two_people_are_both_kept_and_their_disagreement_shown(run, teammate, approver) -> None:
    save_label(teammate, run.pk, "ticket-04", "exact_label", "pass", note="fine")
    save_label(approver, run.pk, "ticket-04", "exact_label", "fail", note="not fine")
    save_label(teammate, run.pk, "ticket-06", "exact_label", "pass")
    save_label(approver, run.pk, "ticket-06", "exact_label", "pass")
    listed = {
        item.case_id: item
        for item in run_labels(user=teammate, run_id=run.pk, criterion="exact_label")
    }
    assert [(label.author, label.value, label.note) for label in listed["ticket-04"].labels] == [
        ("bob", 1.0, "fine"),
        ("alice", 0.0, "not fine"),
    ]
    assert listed["ticket-04"].people_disagree
    assert listed["ticket-04"].mean == 0.5
    assert not listed["ticket-06"].people_disagree
    people = people_agreement(run.pk, "exact_label")
    assert people is not None
    assert people.n == 2
    assert people.agreement.value == 0.5
    judge = run_calibration(run.pk, "exact_label", user=teammate)
    assert judge is not None
    assert judge.n == 1, "a case people split evenly on has no pass/fail truth"


def test_the_queue_draws_from_the_runs_seed_and_cases_and_reading_it_writes_nothing(
    run, teammate, viewer
) -> None:
    seed = Dataset.objects.get(pk=run.dataset_id).label_seed
    ids = list(CaseResult.objects.filter(run=run).values_list("case_id", flat=True))
    expected = list(islice(review_draws(ids, seed), 200))
    assert {d.probability for d in expected} == {1 / 12}
    first = review_queue(viewer, run.pk, "reply_quality")
    assert first.position == next(d.position for d in expected if d.case_id != "ticket-05")
    assert first.case_id == expected[first.position].case_id != "ticket-05"
    assert first.probability == 1 / 12
    assert first.judge_feedback is not None
    assert first.estimate is None
    assert labelled_metric(run.pk, "reply_quality") is None
    again = review_queue(viewer, run.pk, "reply_quality", blind=True)
    assert (again.case_id, again.position) == (first.case_id, first.position)
    assert (again.judge_value, again.judge_feedback) == (None, None)
    shown = CaseResult.objects.get(run=run, case_id=again.case_id)
    row = DatasetCase.objects.get(dataset_id=run.dataset_id, case_id=again.case_id)
    assert (again.input, again.output, again.expected) == (row.input, shown.output, row.expected)
    save_label(teammate, run.pk, first.case_id, "reply_quality", 0.5)
    after = review_queue(viewer, run.pk, "reply_quality")
    assert after.position > first.position
    assert after.case_id != first.case_id
    assert after.estimate is not None
    assert after.draws_labelled >= 1
    assert after.labels_total == 1
    assert labelled_metric(run.pk, "reply_quality") == after.estimate
    assert Dataset.objects.get(pk=run.dataset_id).label_seed == seed


def queue_queries(n: int) -> list[str]:
    """The queries of the review queue of an n-case run once three draws are labelled."""
    run = ticket_run(n, ticket_bot)
    for _ in range(3):
        shown = review_queue(LOCAL, run.pk, "reply_quality")
        assert shown.case_id is not None
        save_label(LOCAL, run.pk, shown.case_id, "reply_quality", 1.0, author_name="tester")
    with CaptureQueriesContext(connection) as queries:
        shown = review_queue(LOCAL, run.pk, "reply_quality")
    assert shown.draws_labelled >= 3
    assert shown.estimate is not None
    return [query["sql"] for query in queries.captured_queries]


def test_the_queue_asks_the_database_as_much_for_500_cases_as_for_50() -> None:
    small, large = queue_queries(50), queue_queries(500)
    assert len(large) == len(small), "\n".join(large)
    assert len(large) <= 12, "\n".join(large)


def test_a_skip_moves_past_a_draw_and_a_fully_labelled_queue_has_nothing_left(
    run, teammate
) -> None:
    first = review_queue(teammate, run.pk, "reply_quality")
    skipped = review_queue(teammate, run.pk, "reply_quality", after=first.position)
    assert skipped.position is not None
    assert first.position is not None
    assert skipped.position > first.position
    assert skipped.estimate is None, "a skip is not a label"
    for number in range(12):
        if number != 5:
            save_label(teammate, run.pk, f"ticket-{number:02d}", "reply_quality", 1.0)
    done = review_queue(teammate, run.pk, "reply_quality")
    assert (done.case_id, done.position, done.input) == (None, None, None)
    assert done.estimate is not None
    assert done.estimate.next_position is None
    # Every case the judge scored is labelled: the figure is the people's, the failed
    # case still at its worst and best.
    assert done.estimate.known
    assert (done.estimate.n_labels, done.estimate.cases_left) == (11, 0)
    assert done.estimate.estimate == 1.0
    assert (done.estimate.interval.lower, done.estimate.interval.upper) == (11 / 12, 1.0)
    assert done.labels_total == 11
    assert done.labels_needed is None


def test_a_loaded_result_carries_the_labels_and_gives_the_same_figures(
    run, teammate, approver
) -> None:
    from runs.selectors.result_labels import run_result_labels
    from runs.selectors.results import run_result

    assert run_result_labels(run=run) == {}
    for _ in range(3):
        shown = review_queue(teammate, run.pk, "reply_quality")
        assert shown.case_id is not None
        save_label(teammate, run.pk, shown.case_id, "reply_quality", 0.5)
    save_label(approver, run.pk, "ticket-01", "reply_quality", 1.0)
    save_label(teammate, run.pk, "ticket-01", "reply_quality", 0.75)
    save_label(teammate, run.pk, "ticket-02", "exact_label", "fail")
    result = run_result(run=run)  # a loaded run carries its labels
    assert set(result.labels) == {"exact_label", "reply_quality"}
    # One queue for the run's cases, read as far as each metric's labels go: exact_label's
    # stops at its first draw on a judged case other than ticket-02, its one label.
    drawn, other = result.labels["exact_label"].draws, result.labels["reply_quality"].draws
    assert drawn[-1].case_id not in ("ticket-02", "ticket-05")
    assert {d.case_id for d in drawn[:-1]} <= {"ticket-02", "ticket-05"}
    shorter = min(len(drawn), len(other))
    assert drawn[:shorter] == other[:shorter]
    assert result.labelled("reply_quality") is not None
    assert result.labelled("reply_quality") == labelled_metric(run.pk, "reply_quality")
    assert result.calibration("reply_quality") == run_calibration(run.pk, "reply_quality")
    assert result.people_agreement("reply_quality") == people_agreement(run.pk, "reply_quality")
    assert result.calibration("exact_label") == run_calibration(run.pk, "exact_label")
