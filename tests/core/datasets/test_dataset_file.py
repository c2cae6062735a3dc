"""A dataset file checked without holding its rows gives what loading it whole gives: the
same digest, counts and rows, and the same error for a bad file (`check_dataset_file`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import oloproof_core.datasets.ids as dataset_ids
from oloproof_core import DatasetError, check_dataset_file, load_dataset

ODD_ROWS: list[dict[str, Any]] = [
    {"id": "é-1", "input": {"q": "naïve café", "n": 1.5}, "expected": {"label": "ünï"},
     "split": "test", "cluster": "doc-α"},
    {"input": {"z": [1, {"b": None, "a": True}], "q": "👩‍🔬 \u2028 line\u2029 end"},
     "id": "emoji-👍", "split": "train"},
    {"id": "rtl", "input": {"q": "עברית \u202e reversed"}, "expected": None, "cluster": "doc-α"},
    {"id": "combining", "input": {"q": "e\u0301 vs \u00e9", "tab": "a\tb"},
     "expected": {"x": {"nested": ["\\", "\""]}}, "split": "test"},
]  # fmt: skip

CSV_TEXT = (
    "id,input.q,expected.label,split,cluster\r\n"
    'a,"naïve, café",x,test,\r\n'
    "b,👩‍🔬,,train,doc-α\r\n"
    'c,"two\nlines",y,test,doc-α\r\n'
)


def written(folder: Path, kind: str) -> Path:
    """The odd rows as a file of this kind, with a blank line and CRLF where allowed."""
    if kind == "csv":
        path = folder / "d.csv"
        path.write_bytes(CSV_TEXT.encode())
        return path
    if kind == "json":
        path = folder / "d.json"
        path.write_text(json.dumps(ODD_ROWS, indent=2), encoding="utf-8")
        return path
    path = folder / "d.jsonl"
    lines = [json.dumps(row, ensure_ascii=index % 2 == 0) for index, row in enumerate(ODD_ROWS)]
    path.write_bytes(("\r\n".join(lines[:2]) + "\n\n" + "\n".join(lines[2:]) + "\n").encode())
    return path


def shape(row: Any) -> tuple[Any, ...]:
    return (row.id, row.input, row.expected, row.split, row.cluster, row.input_digest,
            row.expected_digest)  # fmt: skip


@pytest.mark.parametrize("kind", ["jsonl", "json", "csv"])
@pytest.mark.parametrize("split", [None, "test"])
def test_the_digest_counts_and_rows_are_those_of_the_whole_load(
    tmp_path: Path, kind: str, split: str | None
) -> None:
    path = written(tmp_path, kind)
    whole = load_dataset(str(path), split=split)
    checked = check_dataset_file(path, split=split)
    assert (checked.source, checked.digest, checked.split, checked.splits) == (
        whole.source, whole.digest, whole.split, whole.splits,
    )  # fmt: skip
    assert len(checked) == checked.n_cases == len(whole)
    assert [shape(row) for row in checked.rows()] == [shape(row) for row in whole.rows]


GOOD = '{"id": "%s", "input": {"q": 1}}'
BAD_FILES = {
    "bad JSON deep in": [GOOD % i for i in range(40)] + ['{"id": "x", "input": {'],
    "a repeated id": [GOOD % "a", GOOD % "b", GOOD % "c", GOOD % "b"],
    "a repeat before a bad line": [GOOD % "a", GOOD % "a", '{"id": 3, "input": {}}'],
    "a bad line before a repeat": [GOOD % "a", '{"id": 3, "input": {}}', GOOD % "a"],
    "a repeat before a NaN": [GOOD % "a", "", GOOD % "a", '{"id": "n", "input": {"x": NaN}}'],
    "an unknown key": [GOOD % "a", '{"id": "b", "input": {}, "label": 1}'],
    "a too long id": [GOOD % ("x" * 600)],
    "no rows": ["", "  "],
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_each_error_is_the_one_loading_it_whole_gives(tmp_path: Path, name: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(BAD_FILES[name]) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError) as whole:
        load_dataset(str(path))
    with pytest.raises(DatasetError) as checked:
        check_dataset_file(path)
    assert str(checked.value) == str(whole.value)


def test_bytes_that_are_not_text_and_a_missing_split_are_the_same_errors(tmp_path: Path) -> None:
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"id": "a", "input": {}}\n{"id": "caf\xe9", "input": {}}\n')
    split = written(tmp_path, "jsonl")
    for path, chosen in ((latin, None), (split, "validation"), (tmp_path / "none.jsonl", None)):
        with pytest.raises(DatasetError) as whole:
            load_dataset(str(path), split=chosen)
        with pytest.raises(DatasetError) as checked:
            check_dataset_file(path, split=chosen)
        assert str(checked.value) == str(whole.value)


def test_ids_that_only_share_a_hash_are_no_repeat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every id hashes alike: each is a suspect, and the ids themselves decide.
    monkeypatch.setattr(dataset_ids, "hash", lambda text: 7, raising=False)
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join(GOOD % i for i in range(50)) + "\n", encoding="utf-8")
    assert check_dataset_file(path).n_cases == 50
    with path.open("a", encoding="utf-8") as handle:
        handle.write(GOOD % 17 + "\n")
    with pytest.raises(DatasetError, match=r"d\.jsonl:51: duplicate id '17' \(first on line 18\)"):
        check_dataset_file(path)


def test_a_file_changed_after_its_check_is_refused_when_read_again(tmp_path: Path) -> None:
    path = written(tmp_path, "jsonl")
    checked = check_dataset_file(path)
    path.write_bytes(path.read_bytes().replace(b"1.5", b"2.5"))
    with pytest.raises(DatasetError, match="the file changed while its rows were read"):
        list(checked.rows())
