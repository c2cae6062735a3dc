"""People's labels in a real browser: the review queue of a model-judged metric worked with
its keys and buttons, and the metric page's combined interval appearing and moving."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from runs.models import Label, Run
from runs.selectors.label_cases import cases_to_label
from tests.browser.conftest import Visit
from tests.runs.conftest import member
from tests.support.fake_openai import FakeOpenAI
from tests.support.judged_runs import CURT, GREETS, judged_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def shown_case(page: Any) -> str:
    return str(page.locator("#label-form input[name=case_id]").get_attribute("value"))


def submitting(page: Any, action: Any) -> str:
    """Do `action`, which sends the label form, and return the case the next page shows."""
    labelled = shown_case(page)
    with page.expect_navigation():
        action()
    page.wait_for_load_state("load")
    assert "/review/" in page.url
    return labelled


def combined(visit: Visit, run: Run) -> str:
    visit.go(f"/runs/{run.pk}/metrics/tone/")
    return str(visit.page.locator("#combined-interval").inner_text())


def judge_says(page: Any) -> str:
    """The digit that agrees with the judge on the case shown: 9 (greets) or 0 (curt)."""
    judge = page.locator("#judge-verdict").inner_text()
    assert (GREETS in judge) != (CURT in judge)
    return "9" if GREETS in judge else "0"


def runner_on_a_judged_run(visit: Visit, models_on: FakeOpenAI, tmp_path: Path) -> tuple[Run, Any]:
    """A recorded model-judged run, and the browser's page signed in as a runner."""
    run = judged_run(models_on, tmp_path)
    member("rita", "runner")
    visit.login("rita")
    return run, visit.page


def test_labelling_the_queue_with_keys_and_buttons_moves_the_combined_interval(
    visit: Visit, models_on: FakeOpenAI, tmp_path: Path
) -> None:
    run, page = runner_on_a_judged_run(visit, models_on, tmp_path)
    visit.go(f"/runs/{run.pk}/")
    people = page.locator("td.people-cell[data-metric=tone]")
    assert "assumes the judge is right" in people.inner_text()
    page.click("a.metric-link:has-text('tone')")
    page.wait_for_load_state("load")
    assert page.locator("#assumes-judge").inner_text() == "This figure assumes the judge is right."
    page.click("#review-link")
    page.wait_for_load_state("load")

    # The judge beside the case; hidden when blind, and back again.
    judge_says(page)
    page.click("#blind-toggle")
    page.wait_for_load_state("load")
    assert "blind=1" in page.url
    assert page.locator("#judge-verdict").count() == 0
    assert GREETS not in page.content()
    assert CURT not in page.content()
    page.click("#blind-toggle")
    page.wait_for_load_state("load")

    # ? lists the keys; a digit scores (9 the top of the range, 0 the bottom).
    assert page.locator("#review-keys").is_hidden()
    page.keyboard.press("?")
    assert page.locator("#review-keys").is_visible()
    page.keyboard.press("?")
    assert page.locator("#review-keys").is_hidden()
    submitting(page, lambda: page.keyboard.press(judge_says(page)))
    assert page.locator("#labels-total").inner_text() == "1"
    assert re.fullmatch(
        r"\[\d\.\d{3}, \d\.\d{3}\]", page.locator("#progress-interval").inner_text()
    )

    # n goes to the note (typed keys stay there), Escape leaves it, the digit labels.
    page.keyboard.press("n")
    page.keyboard.type("greets? 9 or 0")
    assert page.locator("textarea[name=note]").input_value() == "greets? 9 or 0"
    page.keyboard.press("Escape")
    noted = submitting(page, lambda: page.keyboard.press(judge_says(page)))
    early = combined(visit, run)
    visit.go(f"/runs/{run.pk}/review/tone/")

    # s skips to the next draw; the button saves what the field holds.
    position = page.locator("#draw-position").inner_text()
    with page.expect_navigation():
        page.keyboard.press("s")
    assert page.url.endswith(f"?after={position}")
    assert int(page.locator("#draw-position").inner_text()) > int(position)
    page.fill("#label-form input[name=value]", "1" if judge_says(page) == "9" else "0")
    submitting(page, lambda: page.click("#label-form button[type=submit]"))
    assert Label.objects.count() == 3
    assert _label_of(run, noted).note == "greets? 9 or 0"

    # The skipped draw and a few more: six labels agreeing with the judge narrow the
    # interval from the whole range whatever cases were drawn.
    visit.go(f"/runs/{run.pk}/review/tone/")
    while int(page.locator("#labels-total").inner_text()) < 6:
        submitting(page, lambda: page.keyboard.press(judge_says(page)))
    later = combined(visit, run)
    # Two labels of twenty cases: the interval is at most the range their labels leave
    # open (18 cases of 20 unknown); with the judge's verdicts beside them it may be a
    # little narrower, by how far the two draws let it lean on the judge.
    low, high = (float(end) for end in early.strip("[]").split(", "))
    assert 0.8 < high - low <= 18 / 20 + 1e-3
    assert later != early
    assert int(page.locator("#labels-used").inner_text().split()[0]) >= 6
    assert page.locator("#assumes-judge").count() == 0
    visit.go(f"/runs/{run.pk}/")
    assert later in people.inner_text()
    assert visit.dialogs == []


def test_pass_and_fail_by_key_and_by_button(
    visit: Visit, models_on: FakeOpenAI, tmp_path: Path
) -> None:
    run, page = runner_on_a_judged_run(visit, models_on, tmp_path)
    visit.go(f"/runs/{run.pk}/review/exact_label/?blind=1")
    passed = submitting(page, lambda: page.keyboard.press("p"))
    assert "blind=1" in page.url
    failed = submitting(page, lambda: page.keyboard.press("f"))
    clicked = submitting(page, lambda: page.click("#label-form button.pass-button"))
    values = {
        case: Label.objects.get(key=key).value
        for case, key in _keys(run, [passed, failed, clicked]).items()
    }
    assert values == {passed: 1.0, failed: 0.0, clicked: 1.0}
    assert page.locator("#labels-total").inner_text() == "3"
    visit.go(f"/runs/{run.pk}/metrics/exact_label/")
    assert page.locator("#combined-interval").is_visible()
    assert page.locator("#calibration-figures tr[data-figure=kappa]").is_visible()


def _label_of(run: Run, case_id: str) -> Label:
    return Label.objects.get(key=_keys(run, [case_id])[case_id])


def _keys(run: Run, case_ids: list[str]) -> dict[str, str]:
    cases = cases_to_label(run=run, case_ids=case_ids)
    return {case_id: str(cases[case_id].key) for case_id in case_ids}
