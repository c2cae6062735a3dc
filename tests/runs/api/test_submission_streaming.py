"""Submission checks and records a dataset from its file without holding its rows: the
same rows and digest as loading it whole, the same errors, the same limit, and memory
that does not grow with the dataset (`oloproof_core.datasets.file`)."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.db import transaction

import oloproof_core as engine
import oloproof_core.configs.checks as run_config_checks
from runs.access import LOCAL
from runs.errors import RunConfigInvalidError
from runs.models import Dataset, DatasetCase, Run
from runs.services import run_submit
from runs.writers.dataset_recording import dataset_record
from runs.writers.projects import code_root_register, project_default_ensure
from tests.support.platform import write_project

pytestmark = pytest.mark.django_db

ODD_ROWS: list[dict[str, Any]] = [
    {"id": "q-é1", "input": {"question": "naïve café ﬁ", "n": 1.5},
     "expected": {"label": "refund"}, "split": "test", "cluster": "doc-α"},
    {"input": {"question": "👩‍🔬 \u2028 sep\u2029 end", "z": [1, {"b": None, "a": True}]},
     "id": "emoji-👍", "expected": {"label": "other"}, "split": "train", "cluster": "doc-α"},
    {"id": "rtl", "input": {"question": "עברית \u202e reversed"}, "cluster": "doc-β"},
    {"id": "combining", "input": {"question": "e\u0301 vs \u00e9", "tab": "a\tb\\\""},
     "expected": {"label": "refund", "why": {"nested": ["\\", "\"", ""]}}, "split": "test",
     "cluster": "doc-β"},
]  # fmt: skip
ODD_DIGESTS = {
    # What the whole-file loader gave for this file before submission streamed it.
    None: "33e217e056ab8ccf76c702b455082549404466e62e9a381d2b916bc9c13b5376",
    "test": "90ad32c253bfc9e0482af3eb6f8993c86da510d55858873f920b7883f854766d",
}


@pytest.fixture(autouse=True)
def code_root(tmp_path: Path, db: None) -> None:
    """Every project of a test lies in its folder: one code root for them all."""
    code_root_register(by=LOCAL, project=project_default_ensure(), path=str(tmp_path))


def submitted(config_path: Path, **changes: Any) -> Run:
    config = {**yaml.safe_load(config_path.read_text()), **changes}
    with transaction.atomic():
        return run_submit(config=config, base_dir=str(config_path.parent))


def odd_project(folder: Path) -> Path:
    """A project whose dataset has clusters, splits, expected or not, and odd text, with
    escaped and raw UTF-8 lines, a CRLF line ending and a blank line."""
    config = write_project(folder, n_cases=1)
    lines = [
        json.dumps(row, ensure_ascii=index % 2 == 1) + ("\r\n" if index == 0 else "\n")
        for index, row in enumerate(ODD_ROWS)
    ]
    lines.insert(2, "\n")
    (folder / "data.jsonl").write_bytes("".join(lines).encode())
    return config


def recorded_rows(dataset: Dataset) -> list[tuple[Any, ...]]:
    return list(
        DatasetCase.objects.filter(dataset=dataset)
        .order_by("position")
        .values_list("case_id", "position", "input", "expected", "split", "cluster")
    )


@pytest.mark.parametrize("split", [None, "test"])
def test_the_rows_and_digest_recorded_are_those_of_the_whole_load(
    tmp_path: Path, split: str | None
) -> None:
    config = odd_project(tmp_path / "odd")
    run = submitted(config, **({"split": split} if split else {}))
    assert run.dataset is not None
    streamed = (run.dataset.digest, run.dataset.n_cases, run.dataset.splits, run.cases_total)
    rows = recorded_rows(run.dataset)
    assert streamed[0] == ODD_DIGESTS[split]

    # The whole-file path (the workers' `run_start` for a run queued without its dataset).
    Run.objects.all().delete()
    Dataset.objects.all().delete()
    whole = dataset_record(engine.load_dataset(str(config.parent / "data.jsonl"), split=split))
    assert (whole.digest, whole.n_cases, whole.splits, whole.n_cases) == streamed
    assert recorded_rows(whole) == rows
    assert [row[0] for row in rows] == [
        item["id"] for item in ODD_ROWS if split is None or item.get("split") == split
    ]


def nothing_recorded() -> bool:
    return (Run.objects.count(), Dataset.objects.count(), DatasetCase.objects.count()) == (0, 0, 0)


def test_a_bad_line_deep_in_a_large_file_is_named_and_nothing_is_recorded(tmp_path: Path) -> None:
    config = write_project(tmp_path / "bad", n_cases=30_000)
    data = config.parent / "data.jsonl"
    lines = data.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[24_999] = '{"id": "case_24999", "input": {"question": "x"}, "expected": 3}\n'
    data.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(RunConfigInvalidError) as refused:
        submitted(config)
    [(key, message)] = refused.value.problems
    assert key == "dataset"
    assert f"{data}:25000: 'expected' of row 'case_24999' must be an object" in message
    assert nothing_recorded()

    lines[24_999] = '{"id": "case_00007", "input": {"question": "again"}}\n'
    data.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(RunConfigInvalidError) as refused:
        submitted(config)
    [(key, message)] = refused.value.problems
    assert f"{data}:25000: duplicate id 'case_00007' (first on line 8)" in message
    assert nothing_recorded()


def test_a_dataset_or_split_over_the_limit_is_refused_naming_the_setting(
    tmp_path: Path, settings: Any
) -> None:
    settings.OLOPROOF_MAX_CASES = 2
    config = odd_project(tmp_path / "odd")
    with pytest.raises(RunConfigInvalidError) as refused:
        submitted(config)
    [(key, message)] = refused.value.problems
    assert key == "dataset"
    assert "dataset 'data.jsonl' has 4 cases, over the limit of 2 cases in one run" in message
    assert "raise OLOPROOF_MAX_CASES" in message
    assert nothing_recorded()
    # Only the split's rows count.
    settings.OLOPROOF_MAX_CASES = 1
    with pytest.raises(RunConfigInvalidError) as refused:
        submitted(config, split="test")
    [(key, message)] = refused.value.problems
    assert "dataset 'data.jsonl' (split 'test') has 2 cases, over the limit of 1" in message
    assert nothing_recorded()
    assert submitted(config, split="train").cases_total == 1


# Memory -------------------------------------------------------------------------------


def submitting_peak(config: Path) -> int:
    """Python's peak memory while the run is submitted (its dataset new to the database)."""
    tracemalloc.start()
    try:
        submitted(config)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_submitting_20000_cases_holds_little_more_memory_than_5000(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configs = {n: write_project(tmp_path / str(n), n_cases=n) for n in (20, 5000, 20_000)}
    submitting_peak(configs[20])  # code loaded once
    small, large = submitting_peak(configs[5000]), submitting_peak(configs[20_000])
    # What grows is each id's hash while the file is checked: 8 bytes a row, and 1 more
    # while they are compared. Measured: on SQLite the batch of rows written at once is
    # the peak (1.59 and 1.60 MB); PostgreSQL copies row by row, and there the hashes are
    # (70 and 204 kB: 8.9 bytes a row).
    assert large - small < 16 * 15_000, (small, large)

    # Loading the dataset whole, as submission once did, grows by 1.2 kB a row (6.1-6.8
    # and 24.5 MB).
    monkeypatch.setattr(run_config_checks, "check_dataset_file", engine.load_dataset)
    Run.objects.all().delete()
    Dataset.objects.all().delete()
    whole_small, whole_large = submitting_peak(configs[5000]), submitting_peak(configs[20_000])
    assert whole_large - whole_small > 500 * 15_000, (whole_small, whole_large)
