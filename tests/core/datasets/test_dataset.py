from __future__ import annotations

import json

import pytest

from oloproof import DatasetError
from oloproof_core.datasets.dataset import load_dataset

ROWS = [
    {"id": "a", "input": {"q": "one"}, "expected": {"label": "x"}, "split": "test"},
    {"id": "b", "input": {"q": "two"}, "split": "train", "cluster": "doc-1"},
]


def write_lines(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_jsonl_json_csv_and_list_load_the_same_rows_with_the_same_digest(tmp_path):
    jsonl = write_lines(tmp_path / "d.jsonl", [json.dumps(row) for row in ROWS])
    array = tmp_path / "d.json"
    array.write_text(json.dumps(ROWS, indent=2))
    table = tmp_path / "d.csv"
    table.write_text("id,input.q,expected.label,split,cluster\na,one,x,test,\nb,two,,train,doc-1\n")

    from_jsonl = load_dataset(str(jsonl))
    from_json = load_dataset(array)
    from_list = load_dataset(ROWS)
    from_csv = load_dataset(str(table))

    assert [row.id for row in from_jsonl.rows] == ["a", "b"]
    assert from_jsonl.digest == from_json.digest == from_list.digest
    assert from_csv.rows[0].input == {"q": "one"}
    assert from_csv.rows[0].expected == {"label": "x"}
    assert from_csv.rows[1].cluster == "doc-1"


def test_digest_ignores_key_order_and_formatting_but_not_content(tmp_path):
    one = write_lines(tmp_path / "1.jsonl", ['{"id":"a","input":{"x":1,"y":2}}'])
    two = write_lines(tmp_path / "2.jsonl", ['{ "input": {"y": 2, "x": 1}, "id": "a" }'])
    three = write_lines(tmp_path / "3.jsonl", ['{"id":"a","input":{"x":1,"y":3}}'])
    assert load_dataset(str(one)).digest == load_dataset(str(two)).digest
    assert load_dataset(str(one)).digest != load_dataset(str(three)).digest


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"id": "a", "input": {"q": 1}', "invalid JSON"),
        ('{"input": {"q": 1}}', "missing 'id'"),
        ('{"id": 7, "input": {"q": 1}}', "'id' must be a non-empty string"),
        ('{"id": "c", "input": "text"}', "'input' of row 'c' must be an object"),
        ('{"id": "c", "input": {}, "expected": 3}', "'expected' of row 'c' must be an object"),
        ('{"id": "c", "input": {}, "label": "x"}', "unknown key 'label'"),
        ('{"id": "c"}', "has no 'input' object"),
        ('["id", "c"]', "a row must be a JSON object"),
        ('\ufeff{"id": "c", "input": {}}', "Unexpected UTF-8 BOM (decode using utf-8-sig)"),
        ('{"id": "c", "input": {"x": NaN}}', "NaN is not a JSON number"),
    ],
)
def test_bad_rows_name_file_line_and_problem(tmp_path, line, problem):
    path = write_lines(tmp_path / "bad.jsonl", ['{"id": "ok", "input": {}}', line])
    with pytest.raises(DatasetError) as caught:
        load_dataset(str(path))
    assert str(caught.value).startswith(f"{path}:2: ")
    assert problem in str(caught.value)


def test_duplicate_id_names_both_lines(tmp_path):
    path = write_lines(
        tmp_path / "dup.jsonl", ['{"id": "a", "input": {}}', "", '{"id": "a", "input": {}}']
    )
    with pytest.raises(DatasetError, match=r"dup.jsonl:3: duplicate id 'a' \(first on line 1\)"):
        load_dataset(str(path))


def test_json_array_errors_point_at_the_element_line(tmp_path):
    path = tmp_path / "rows.json"
    path.write_text('[\n  {"id": "a", "input": {}},\n  {"id": "b", "input": 5}\n]\n')
    with pytest.raises(DatasetError, match=r"rows.json:3: 'input' of row 'b'"):
        load_dataset(str(path))


def test_unknown_csv_column_and_missing_file_and_format(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("id,question\na,hi\n")
    with pytest.raises(DatasetError, match="unknown column 'question'"):
        load_dataset(str(table))
    with pytest.raises(DatasetError, match="file not found"):
        load_dataset(str(tmp_path / "absent.jsonl"))
    other = tmp_path / "d.txt"
    other.write_text("x")
    with pytest.raises(DatasetError, match="unknown dataset format"):
        load_dataset(str(other))
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(DatasetError, match="no rows"):
        load_dataset(str(empty))


def test_split_selection_and_unknown_split():
    assert [row.id for row in load_dataset(ROWS, split="test").rows] == ["a"]
    assert load_dataset(ROWS, split="test").digest != load_dataset(ROWS).digest
    with pytest.raises(DatasetError, match="splits in this dataset: test, train"):
        load_dataset(ROWS, split="validation")


def test_large_jsonl_streams_rows(tmp_path):
    path = tmp_path / "big.jsonl"
    with path.open("w") as handle:
        for i in range(20_000):
            handle.write(json.dumps({"id": str(i), "input": {"n": i}}) + "\n")
    dataset = load_dataset(str(path))
    assert len(dataset) == 20_000
    assert dataset.rows[-1].input == {"n": 19_999}
