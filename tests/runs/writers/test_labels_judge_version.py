"""A new version of the judge (its prompt edited) judges again, keeps people's labels, and
has a calibration of its own, named on the metric page."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client

from oloproof import evaluate
from oloproof.evaluators import ExactMatch, MetricFile
from runs.models import Run
from runs.selectors.labels import run_calibration
from runs.store import DjangoStore
from runs.writers.labels import save_label
from tests.support.fake_openai import FakeOpenAI, Reply
from tests.support.judged_runs import GREETS, TONE_METRIC, greeter, judged_rows, judged_run

pytestmark = pytest.mark.django_db


def test_each_judge_version_is_calibrated_on_its_own_verdicts_with_the_same_labels(
    models_on: FakeOpenAI, tmp_path: Path, teammate: object
) -> None:
    first = judged_run(models_on, tmp_path, n=12)
    for i in range(6):  # people pass every reply; the first judge fails q-000 and q-003
        save_label(teammate, first.pk, f"q-{i:03d}", "tone", 1.0)
    before = run_calibration(first.pk, "tone")
    assert before is not None
    assert before.n == 6
    assert before.mean_abs_difference.value == pytest.approx(2 / 6)

    models_on.respond_with(lambda request: Reply(GREETS))
    metric = tmp_path / "tone.py"
    metric.write_text(TONE_METRIC.replace("greet the customer", "greet the reader"), "utf-8")
    result = evaluate(
        greeter,
        judged_rows(12),
        [MetricFile(metric, criterion="tone"), ExactMatch(criterion="exact_label", field="label")],
        store=DjangoStore(),
        concurrency=1,
        isolation="thread",
    )
    assert result.provenance["judging"]["tone"]["cached"] == 0  # the new prompt judged anew
    second = Run.objects.get(pk=int(result.run_id))
    after = run_calibration(second.pk, "tone")
    assert after is not None
    assert after.n == 6, "the labels of the same outputs count for the new version"
    assert after.mean_abs_difference.value == 0.0

    client = Client()
    client.force_login(teammate)  # type: ignore[arg-type]
    pages = [
        client.get(f"/runs/{run.pk}/metrics/tone/").content.decode() for run in (first, second)
    ]
    versions = [_version(page) for page in pages]
    assert versions[0] != versions[1]
    assert all(version.startswith("metric_file version ") for version in versions)


def _version(page: str) -> str:
    start = page.index('id="judge-version">') + len('id="judge-version">')
    return page[start : page.index("</span>", start)]
