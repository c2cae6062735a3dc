"""Flaky or regressed, along the user's path: two releases of a system, each run with
`oloproof run --repeats 5`, then `oloproof compare 1 2 --cases regressed` (and flaky,
improved, and the JSON), as docs/repeats.md shows it; then the dashboard's compare grid
in headless Chromium, filtered the same way, and the REST API's compared cases."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.journeys.conftest import run_user
from tests.journeys.test_approvals import account, dashboard, signed_in

DATASET = "".join(
    json.dumps({"id": f"q{i}", "input": {"q": i}, "expected": {"label": "a"}}) + "\n"
    for i in range(6)
)

CONFIG = """system: bot.py:answer
dataset: data.jsonl
evaluators:
  - ExactMatch: {criterion: right, field: label}
"""

RELEASE = '''
from oloproof import current_case, system

RIGHT_ON = {right_on}


@system(name="bot", version="{version}")
def answer(question):
    """Right on the repeats RIGHT_ON names for its case (every repeat when not named)."""
    repeat = int(current_case().id.rpartition("#r")[2])
    right = repeat in RIGHT_ON.get(question["q"], range(1, 6))
    return {{"label": "a" if right else "b"}}
'''

# q0 breaks in release 2 (5/5 → 0/5); q3 is fixed (0/5 → 5/5); q4 passes some repeats and
# fails others in both (2/5 → 3/5); q1, q2 always pass; q5 always fails.
FIRST = {0: [1, 2, 3, 4, 5], 3: [], 4: [1, 3], 5: []}
SECOND = {0: [], 3: [1, 2, 3, 4, 5], 4: [1, 2, 4], 5: []}


@pytest.fixture
def two_releases(tmp_path: Path) -> Path:
    folder = tmp_path / "bot-project"
    folder.mkdir()
    (folder / "data.jsonl").write_text(DATASET, encoding="utf-8")
    (folder / "oloproof.yaml").write_text(CONFIG, encoding="utf-8")
    for version, right_on in (("1", FIRST), ("2", SECOND)):
        code = RELEASE.format(version=version, right_on=right_on)
        (folder / "bot.py").write_text(code, encoding="utf-8")
        ran = run_user(
            ["oloproof", "run", "oloproof.yaml", "--repeats", "5", "--json", f"v{version}.json"],
            folder,
        )
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert f"recorded run #{version}" in ran.stderr
    return folder


def test_compare_lists_the_case_regressed_beyond_its_noise(two_releases: Path) -> None:
    regressed = run_user(["oloproof", "compare", "1", "2", "--cases", "regressed"], two_releases)
    assert regressed.returncode == 0, regressed.stderr
    text = regressed.stdout
    assert "cases against their own noise (5 → 5 repeats per case): 1 regressed, " in text
    assert "Fisher's exact test" in text
    assert "Tarone's rule then Holm's step-down" in text
    listed = text.split("regressed cases: 1\n", 1)[1].splitlines()
    assert listed == ["  q0  regressed (right 5/5 → 0/5, p 0.00794, adjusted 0.0238)"]

    flaky = run_user(["oloproof", "compare", "1", "2", "--cases", "flaky"], two_releases)
    assert flaky.stdout.split("flaky cases: 1\n", 1)[1].splitlines() == [
        "  q4  flaky (right 2/5 → 3/5, p 1, adjusted 1)"
    ]


def test_the_json_carries_every_case_status_from_result_files(two_releases: Path) -> None:
    shown = run_user(
        ["oloproof", "compare", "v1.json", "v2.json", "--json", "--cases", "improved"],
        two_releases,
    )
    assert shown.returncode == 0, shown.stderr
    found = json.loads(shown.stdout)["repeat_cases"]
    assert found["counts"] == {
        "all": 6,
        "regressed": 1,
        "improved": 1,
        "flaky": 1,
        "changed": 0,
        "stable_pass": 2,
        "stable_fail": 1,
        "unchanged": 0,
        "missing": 0,
    }
    assert [case["case_id"] for case in found["cases"]] == ["q3"]
    evidence = found["cases"][0]["metrics"]["right"]
    assert evidence["baseline"] == {"repeats": 5, "passes": 0, "mean": 0.0}
    assert evidence["candidate"] == {"repeats": 5, "passes": 5, "mean": 1.0}
    assert evidence["adjusted_p_value"] <= found["alpha"] == 0.05


def test_a_status_that_does_not_exist_is_refused(two_releases: Path) -> None:
    refused = run_user(["oloproof", "compare", "1", "2", "--cases", "worse"], two_releases)
    assert refused.returncode == 3
    assert "invalid choice: 'worse'" in refused.stderr
    assert "Traceback" not in refused.stderr


def grid_cases(page: Any) -> list[str]:
    return [str(row.get_attribute("data-case")) for row in page.locator("#grid tbody tr").all()]


@pytest.mark.browser
@pytest.mark.slow
def test_the_compare_grid_filters_by_regressed_improved_and_flaky(
    browser: Any, two_releases: Path
) -> None:
    password = account(two_releases, "ann")
    with dashboard(two_releases) as base, signed_in(browser, base, "ann", password) as page:
        page.goto(base + "/compare/?baseline=1&candidate=2")
        filters = page.locator("nav.repeat-filters")
        assert "5 → 5 repeats per case" in filters.inner_text()
        assert "Regressed beyond noise (1)" in filters.inner_text()
        assert len(grid_cases(page)) == 30  # every repeat of every case

        filters.locator("a[data-cases=regressed]").click()
        page.wait_for_url(re.compile(r".*cases=regressed.*"))
        assert grid_cases(page) == [f"q0#r{j}" for j in range(1, 6)]
        evidence = page.locator("#grid tbody tr").first.locator(".repeat-case")
        assert evidence.get_attribute("data-repeat-status") == "regressed"
        assert "case q0: regressed" in evidence.inner_text()
        assert "right 5/5 → 0/5 p 0.008, adjusted 0.024" in " ".join(evidence.inner_text().split())

        page.locator("nav.repeat-filters a[data-cases=flaky]").click()
        page.wait_for_url(re.compile(r".*cases=flaky.*"))
        assert grid_cases(page) == [f"q4#r{j}" for j in range(1, 6)]
        assert "right 2/5 → 3/5" in page.locator("#grid tbody tr").first.inner_text()
        # The value filter keeps the repeat filter: the flaky case's repeats that went up.
        page.locator("nav.grid-filters a[data-show=improved]").first.click()
        page.wait_for_url(re.compile(r".*show=improved.*cases=flaky.*"))
        assert grid_cases(page) == ["q4#r2", "q4#r4"]

        # A link carries the filter: opened afresh, the page shows the same cases.
        page.goto(base + "/compare/?baseline=1&candidate=2&cases=improved")
        assert grid_cases(page) == [f"q3#r{j}" for j in range(1, 6)]

        # The REST API takes the same filter.
        answer = page.request.get(base + "/api/compare/cases?baseline=1&candidate=2&cases=improved")
        assert answer.status == 200
        items = answer.json()["items"]
        assert [item["case_id"] for item in items] == [f"q3#r{j}" for j in range(1, 6)]
        assert items[0]["repeat_case"]["metrics"]["right"]["evidence"] == "0/5 → 5/5"
        refused = page.request.get(base + "/api/compare/cases?baseline=1&candidate=2&cases=worse")
        assert refused.status == 422


@pytest.mark.browser
@pytest.mark.slow
def test_the_compare_page_pairs_case_means_of_runs_with_different_repeats(
    browser: Any, two_releases: Path
) -> None:
    """Release 2 run again three times a case (run #3), compared with release 1's five."""
    again = run_user(["oloproof", "run", "oloproof.yaml", "--repeats", "3"], two_releases)
    assert again.returncode == 0, again.stderr
    assert "recorded run #3" in again.stderr
    password = account(two_releases, "ann")
    with dashboard(two_releases) as base, signed_in(browser, base, "ann", password) as page:
        page.goto(base + "/compare/?baseline=1&candidate=3")
        note = page.locator("p.case-means").inner_text()
        assert "The runs repeated each case 5 and 3 times: each pair is a case's mean" in note
        filters = page.locator("nav.repeat-filters")
        assert "5 → 3 repeats per case" in filters.inner_text()
        assert len(grid_cases(page)) == 30  # the baseline's five repeats of each case
        page.goto(base + "/compare/?baseline=1&candidate=3&cases=regressed")
        assert grid_cases(page) == [f"q0#r{j}" for j in range(1, 6)]
        evidence = page.locator("#grid tbody tr").first.locator(".repeat-case")
        assert "right 5/5 → 0/3" in " ".join(evidence.inner_text().split())
        # The fourth repeat is the baseline's alone: the candidate's side links nowhere.
        fourth = page.locator('#grid tbody tr[data-case="q0#r4"]')
        assert fourth.locator('a[href*="/runs/1/cases/"]').count() == 1
        assert fourth.locator('a[href*="/runs/3/cases/"]').count() == 0
