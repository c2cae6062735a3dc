"""Fuzzing the inputs: datasets, run configs, policies and metric returns.

The property, for every generated input: a clear error (an OloproofError, which the
command line reports with exit 3, naming the file) or a correct result — never
another exception (a traceback, exit 4), never a hang, never a silent change. A
correct result is one every supported database can store, equal to what was written.
"""

from __future__ import annotations

import csv
import io
import json
import math
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oloproof_core import DatasetError, OloproofError, load_dataset, value_problem
from oloproof_core._util.safe_yaml import yaml_load
from oloproof_core.configs.run_config import check_run_config
from oloproof_core.gates import load_policy
from oloproof_core.judging.evaluators import MetricFile

FUZZ = settings(
    max_examples=150,
    deadline=2000,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
weird_text = st.text(
    alphabet=st.characters(codec=None, categories=None, blacklist_categories=()), max_size=40
) | st.sampled_from(["\x00", "\ud800", "\u202e", "a" * 600, "NaN", "", " "])
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | weird_text
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(weird_text, inner, max_size=4),
    max_leaves=20,
)


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=True)


def _loads_or_error(path: Path) -> Any:
    try:
        return load_dataset(str(path))
    except OloproofError as exc:
        assert str(path) in str(exc), f"the error names the file: {exc}"  # noqa: PT017
        return None


def _storable(dataset: Any) -> None:
    for row in dataset.rows:
        assert value_problem(row.input) is None
        assert value_problem(row.expected) is None
        assert len(row.id) <= 500
        assert "\x00" not in row.id


row_like = st.fixed_dictionaries(
    {"id": weird_text | json_scalars, "input": json_values},
    optional={"expected": json_values, "split": json_scalars, "cluster": json_scalars},
)


@FUZZ
@given(rows=st.lists(row_like | json_values, min_size=0, max_size=5))
def test_jsonl_datasets_load_exactly_or_fail_clearly(tmp_path: Path, rows: list[Any]) -> None:
    path = tmp_path / "data.jsonl"
    try:
        text = "\n".join(_dump(row) for row in rows)
    except UnicodeEncodeError:
        return
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    dataset = _loads_or_error(path)
    if dataset is not None:
        _storable(dataset)
        written = [row for row in rows if isinstance(row, dict)]
        assert [row.id for row in dataset.rows] == [str(row["id"]) for row in written]
        assert [row.input for row in dataset.rows] == [row["input"] for row in written]


@FUZZ
@given(data=st.binary(max_size=300), suffix=st.sampled_from([".jsonl", ".json", ".csv"]))
def test_arbitrary_bytes_are_a_dataset_or_a_clear_error(
    tmp_path: Path, data: bytes, suffix: str
) -> None:
    path = tmp_path / f"data{suffix}"
    path.write_bytes(data)
    dataset = _loads_or_error(path)
    if dataset is not None:
        _storable(dataset)


csv_cell = st.text(alphabet=string.printable + "é\u202e", max_size=12)


@FUZZ
@given(
    header=st.lists(
        st.sampled_from(["id", "input.q", "expected.a", "split", "input.q"]), min_size=1, max_size=5
    ),
    rows=st.lists(st.lists(csv_cell, max_size=6), max_size=5),
)
def test_csv_is_strict_never_silently_wrong(
    tmp_path: Path, header: list[str], rows: list[list[str]]
) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows(rows)
    path = tmp_path / "data.csv"
    path.write_text(buffer.getvalue(), encoding="utf-8")
    dataset = _loads_or_error(path)
    if dataset is None:
        return
    assert len(set(header)) == len(header), "a duplicated column is an error"
    nonblank = [row for row in rows if row]
    assert all(len(row) == len(header) for row in nonblank), "a short or long row is an error"
    for row, loaded in zip(nonblank, dataset.rows, strict=True):
        cells = dict(zip(header, row, strict=True))
        assert loaded.id == cells["id"]
        assert loaded.input.get("q") == cells.get("input.q")


def test_unbalanced_quotes_and_folders_are_clear_errors(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_text('id,input.q\n1,"open\n2,b\n', encoding="utf-8")
    with pytest.raises(DatasetError, match="invalid CSV"):
        load_dataset(str(path))
    (tmp_path / "x.jsonl").mkdir()
    with pytest.raises(DatasetError, match="not a file"):
        load_dataset(str(tmp_path / "x.jsonl"))
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"id": "a", "input": {"x": ' + "[" * 5000 + "]" * 5000 + "}}\n")
    with pytest.raises(DatasetError, match="deep"):
        load_dataset(str(deep))


yaml_texts = st.one_of(
    st.text(alphabet=string.printable + "\u202e&*!", max_size=200),
    st.builds(
        lambda key, value: f"{key}: {value}\n",
        st.sampled_from(["system", "dataset", "evaluators", "timeout", "confidence", "split"]),
        st.sampled_from(
            [
                ".nan",
                ".inf",
                "&a [*a, *a]",
                "[[[[[[",
                "!!binary aGk=",
                "'\\0'",
                '"\\0"',
                '"\\ud800"',
                "2024-01-01",
                "-1",
                "0",
                "1e400",
                "~",
            ]
        ),
    ),
)


@FUZZ
@given(text=yaml_texts)
def test_run_configs_check_or_fail_clearly(text: str) -> None:
    try:
        data = yaml_load(text, source="c.yaml")
        checked = check_run_config(data, label="c.yaml")
    except OloproofError as exc:
        assert "c.yaml" in str(exc)  # noqa: PT017
        return
    assert value_problem(checked) is None


@FUZZ
@given(text=yaml_texts)
def test_policies_load_or_fail_clearly(tmp_path: Path, text: str) -> None:
    path = tmp_path / "release.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        load_policy(str(path))
    except OloproofError as exc:
        assert str(path) in str(exc)  # noqa: PT017


def test_an_alias_bomb_is_refused_before_it_grows(tmp_path: Path) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(12)
    )
    path = tmp_path / "release.yaml"
    path.write_text(bomb, encoding="utf-8")
    with pytest.raises(OloproofError, match="aliases"):
        load_policy(str(path))


@FUZZ
@given(returned=json_values | st.tuples(json_scalars, json_values))
def test_metric_returns_are_a_verdict_or_a_contract_error(tmp_path: Path, returned: Any) -> None:
    path = tmp_path / "metric.py"
    path.write_text(
        "import json\nRETURNED = None\n\ndef score(input, output, expected=None):\n"
        "    return RETURNED\n",
        encoding="utf-8",
    )
    metric = MetricFile(str(path))
    metric.source_object().RETURNED = returned
    try:
        verdict = metric.score({"q": 1}, {"a": 1})
    except OloproofError:
        return
    assert verdict.value is None or math.isfinite(verdict.value)
    assert value_problem(verdict.feedback) is None
    assert all(math.isfinite(sub) for sub in verdict.scores.values())
