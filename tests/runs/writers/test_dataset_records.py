"""A repeated run's dataset record names the dataset it repeated, also a record made
before that was kept (the migration leaves it empty): runs of one dataset at different
repeat counts are then found as the same cases."""

from __future__ import annotations

import pytest

from runs.models import Dataset, Run
from runs.selectors.comparison import comparable_runs
from tests.runs.conftest import record_evaluation

pytestmark = pytest.mark.django_db


def test_a_repeated_run_names_the_dataset_it_repeated_on_its_record(teammate) -> None:
    once = Run.objects.get(pk=int(record_evaluation(6, isolation="thread").run_id))
    twice = Run.objects.get(pk=int(record_evaluation(6, repeats=2, isolation="thread").run_id))
    assert twice.dataset_id != once.dataset_id
    assert twice.dataset.unrepeated_digest == once.dataset.digest
    assert twice.provenance["dataset"]["unrepeated_digest"] == once.dataset.digest
    assert "unrepeated_digest" not in once.provenance["dataset"]
    found = comparable_runs(user=teammate, dataset_id=twice.dataset_id)
    assert {run.pk for run in found} == {once.pk, twice.pk}


def test_a_record_made_before_the_digest_was_kept_gets_it_from_the_next_run(teammate) -> None:
    first = Run.objects.get(pk=int(record_evaluation(6, repeats=2, isolation="thread").run_id))
    # What migration 0022 leaves on a dataset recorded before it.
    Dataset.objects.filter(pk=first.dataset_id).update(unrepeated_digest="")
    again = Run.objects.get(pk=int(record_evaluation(6, repeats=2, isolation="thread").run_id))
    assert again.dataset_id == first.dataset_id
    assert again.dataset.unrepeated_digest == first.provenance["dataset"]["unrepeated_digest"]
