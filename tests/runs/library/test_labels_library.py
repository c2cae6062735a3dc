"""Labels reach the library: a loaded run's labelled figure, a gate decided again with them,
and the run's report; without labels a model-judged metric says what its figure assumes."""

from __future__ import annotations

from pathlib import Path

import pytest

import oloproof
from runs.selectors.labels import labelled_metric, review_queue
from runs.store import DjangoStore
from runs.writers.labels import save_label
from tests.support.fake_openai import FakeOpenAI
from tests.support.judged_runs import judged_run

pytestmark = pytest.mark.django_db

POLICY = {"version": 1, "rules": [{"metric": "tone", "min": 0.3}]}


def test_a_gate_decided_again_reads_the_labels_and_says_so(
    models_on: FakeOpenAI, tmp_path: Path, teammate: object
) -> None:
    run = judged_run(models_on, tmp_path, n=30)
    before = oloproof.gate(run.pk, POLICY, store=DjangoStore())
    assert "assumes the judge is right" in before.rules[0].figures["interval_source"]
    assert "assumes the judge is right" in str(oloproof.load(run.pk, store=DjangoStore()))
    # People pass every reply; the judge fails every third (q-000, q-003, ...). Label ten
    # draws, and on until a draw the judge failed is among them (the queue's seed is
    # random: this takes more than 40 draws with probability under 1e-7).
    labelled_ids: list[str] = []
    while len(labelled_ids) < 10 or all(int(case[2:]) % 3 for case in labelled_ids):
        shown = review_queue(teammate, run.pk, "tone")
        assert shown.case_id is not None
        assert len(labelled_ids) < 40
        save_label(teammate, run.pk, shown.case_id, "tone", 1.0)
        labelled_ids.append(shown.case_id)
    loaded = oloproof.load(run.pk, store=DjangoStore())
    labelled = loaded.labelled("tone")
    assert labelled is not None
    assert labelled.n_labels >= 10
    assert labelled == labelled_metric(run.pk, "tone")
    assert labelled.estimate > loaded.metric("tone").estimate  # the judge fails what people pass
    after = oloproof.gate(run.pk, POLICY, store=DjangoStore())
    rule = after.rules[0]
    assert f"{labelled.n_labels} people's labels" in rule.figures["interval_source"]
    assert rule.figures["upper"] == labelled.interval.upper
    assert "labels" in rule.reason
    assert "with people's labels" in str(loaded)
