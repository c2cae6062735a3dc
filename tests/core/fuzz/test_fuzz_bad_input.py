"""Fuzzing the files people give oloproof, in every encoding and shape they come in.

The property, for every generated input: a clear error (an OloproofError naming the
file, which the command line reports with exit 3) or a correct result — never another
exception, never a hang. Most inputs go through the library's readers in this process;
`test_fuzz_bad_input_cli.py` sends a smaller number through the installed command.
"""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from oloproof._labels import _rows as label_rows
from oloproof_core import OloproofError, load_dataset
from oloproof_core.configs.fields import KEYS
from oloproof_core.configs.run_config import _evaluator_from_entry, _Locator, check_run_config
from oloproof_core.datasets.close_ids import close_ids
from oloproof_core.errors import ConfigError, DeclarationError
from oloproof_core.gates import load_policy
from oloproof_core.judging.evaluators import BUILTIN_EVALUATORS, Evaluator, MetricFile
from oloproof_core.results.reading import load_result
from tests.core.fuzz.test_fuzz_inputs import json_values, weird_text

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
ENCODINGS = ["utf-8", "utf-8-sig", "latin-1", "cp1252", "utf-16", "utf-16-le", "utf-32"]
readable_text = st.text(alphabet=string.printable + "éüß€ñ\u00a0—", max_size=120)


def encoded(text: str, encoding: str) -> bytes:
    return text.encode(encoding, errors="replace")


def _refused_naming(exc: OloproofError, path: Path) -> None:
    said = str(exc)
    assert str(path) in said or path.name in said, said


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return False
    return True


def _says_encoding(exc: OloproofError, data: bytes) -> None:
    """A file that is not UTF-8 is refused as such, saying what it looks like."""
    if not _utf8(data):
        said = str(exc)
        assert "not UTF-8 text" in said, said
        assert any(kind in said for kind in ("UTF-16", "UTF-32", "Latin-1", "binary")), said


POLICY_TEXT = "version: 1\nrules:\n  - metric: exact_label\n    min: 0.5\n"
CONFIG_TEXT = (
    "system: bot:answer\ndataset: data/cases.jsonl\nevaluators:\n"
    "  - ExactMatch: {criterion: exact_label, field: label}\n"
)


@FUZZ
@given(
    extra=readable_text,
    encoding=st.sampled_from(ENCODINGS),
    noise=st.binary(max_size=40),
    where=st.sampled_from(["start", "end", "none"]),
)
def test_policies_in_any_encoding_load_or_say_what_they_are(
    tmp_path: Path, extra: str, encoding: str, noise: bytes, where: str
) -> None:
    text = POLICY_TEXT.replace("version: 1", f"version: 1\ndescription: {json.dumps(extra)}")
    data = encoded(text, encoding)
    data = {"start": noise + data, "end": data + noise, "none": data}[where]
    path = tmp_path / "release.yaml"
    path.write_bytes(data)
    try:
        policy = load_policy(str(path))
    except OloproofError as exc:
        _refused_naming(exc, path)
        _says_encoding(exc, data)
        return
    assert _utf8(data)
    assert policy.spec.rules


@FUZZ
@given(
    extra=readable_text,
    encoding=st.sampled_from(ENCODINGS),
    noise=st.binary(max_size=40),
)
def test_run_configs_in_any_encoding_check_or_say_what_they_are(
    tmp_path: Path, extra: str, encoding: str, noise: bytes
) -> None:
    from oloproof_core.configs.run_config import run_config_read

    data = encoded(f"# {extra}\n{CONFIG_TEXT}", encoding) + noise
    path = tmp_path / "oloproof.yaml"
    path.write_bytes(data)
    try:
        parsed, lines = run_config_read(str(path))
        check_run_config(parsed, label=str(path), lines=lines)
    except OloproofError as exc:
        _refused_naming(exc, path)
        _says_encoding(exc, data)
        return
    assert _utf8(data)


def _result_dict() -> dict[str, Any]:
    return {
        "format": "oloproof-result/1",
        "run_id": "r1",
        "metrics": [
            {
                "metric": "exact_label",
                "criterion": "exact_label",
                "estimate": 0.9,
                "interval": {"lower": 0.7, "upper": 0.98},
                "confidence": 0.95,
                "method": "clopper-pearson exact",
                "n_observed": 10,
                "n_missing": 0,
                "value_type": "pass_fail",
                "score_range": [0.0, 1.0],
            }
        ],
        "cases": [],
        "provenance": {"system": {"name": "bot", "version": "1"}},
    }


def _mutated(data: Any, path: list[Any], value: Any) -> Any:
    """`data` with the item at `path` (as far as it reaches) replaced by `value`."""
    if not path or not isinstance(data, (dict, list)) or not data:
        return value
    copy: Any = dict(data) if isinstance(data, dict) else list(data)
    keys = list(copy) if isinstance(copy, dict) else list(range(len(copy)))
    key = keys[path[0] % len(keys)]
    copy[key] = _mutated(copy[key], path[1:], value)
    return copy


@FUZZ
@given(
    path=st.lists(st.integers(min_value=0, max_value=20), max_size=4),
    value=json_values,
    encoding=st.sampled_from(ENCODINGS),
)
def test_result_files_of_any_shape_load_or_fail_clearly(
    tmp_path: Path, path: list[int], value: Any, encoding: str
) -> None:
    text = json.dumps(_mutated(_result_dict(), path, value), ensure_ascii=False)
    data = encoded(text, encoding)
    file = tmp_path / "run.json"
    file.write_bytes(data)
    try:
        result = load_result(str(file))
    except OloproofError as exc:
        _refused_naming(exc, file)
        _says_encoding(exc, data)
        return
    assert _utf8(data)
    policy = load_policy({"version": 1, "rules": [{"metric": "exact_label", "min": 0.5}]})
    try:
        gate = policy.decide(result)
    except OloproofError:
        return  # the policy cannot apply to this run: said as such
    assert gate.outcome in ("pass", "fail", "inconclusive")


@FUZZ
@given(
    depth=st.sampled_from([50, 500, 990, 1100, 5000, 100_000]),
    opener=st.sampled_from(["[", '{"a": ', '{"metrics": [', '[{"x": ']),
    head=st.sampled_from(["", '{"metrics": ', '{"cases": ']),
)
def test_deeply_nested_result_files_are_refused_never_a_recursion_error(
    tmp_path: Path, depth: int, opener: str, head: str
) -> None:
    closer = {"[": "]", '{"a": ': "}", '{"metrics": [': "]}", '[{"x": ': "}]"}[opener]
    text = head + opener * depth + "1" + closer * depth + ("}" if head else "")
    file = tmp_path / "deep.json"
    file.write_text(text, encoding="utf-8")
    try:
        load_result(str(file))
    except OloproofError as exc:
        _refused_naming(exc, file)


evaluator_names = st.sampled_from([*BUILTIN_EVALUATORS, "Regx", "exactmatch", "ExactMatc"])
parameters = st.dictionaries(
    st.sampled_from(["criterion", "field", "pattern", "value", "schema", "rubric", "feild"])
    | weird_text,
    json_values,
    max_size=4,
)
evaluator_entries = (
    evaluator_names
    | st.builds(lambda name, params: {name: params}, evaluator_names, parameters | st.none())
    | json_values
)
config_values = st.one_of(
    st.none(),
    json_values,
    st.lists(evaluator_entries, max_size=3),
    st.sampled_from(["bot:answer", "data/cases.jsonl", "process", "thread", "off", "auto"]),
)
config_keys = st.sampled_from([*KEYS, "evaluator", "sytem", "datset", "concurency"]) | weird_text


@FUZZ
@given(data=st.dictionaries(config_keys, config_values, max_size=8) | json_values)
def test_generated_run_configs_check_or_fail_clearly(data: Any) -> None:
    try:
        checked = check_run_config(data, label="c.yaml")
    except ConfigError as exc:
        assert str(exc).startswith("c.yaml"), str(exc)  # noqa: PT017
        return
    for key in ("system", "dataset", "evaluators"):
        assert checked.get(key) is not None


@FUZZ
@given(entries=st.lists(evaluator_entries, min_size=1, max_size=4))
def test_generated_evaluator_entries_make_evaluators_or_fail_clearly(
    tmp_path: Path, entries: list[Any]
) -> None:
    where = _Locator("c.yaml", {"evaluators": 3})
    for index, entry in enumerate(entries):
        user_code = isinstance(entry, str) and (":" in entry or entry.endswith(".py"))
        assume(not user_code)
        try:
            made = _evaluator_from_entry(entry, index, str(tmp_path), where)
        except ConfigError as exc:
            assert str(exc).startswith(f"c.yaml:3: evaluators[{index}]: "), str(exc)  # noqa: PT017
            continue
        assert isinstance(made, Evaluator)


policy_rules = st.lists(
    st.dictionaries(
        st.sampled_from(["metric", "min", "max", "missing", "no_regression", "require", "rul"]),
        json_values,
        max_size=3,
    )
    | json_values,
    max_size=3,
)


@FUZZ
@given(
    rules=policy_rules,
    extra=st.dictionaries(
        st.sampled_from(["confidence", "baseline", "sequential", "effect", "rule", "versio"]),
        json_values,
        max_size=2,
    ),
)
def test_generated_policies_load_or_fail_clearly(
    tmp_path: Path, rules: Any, extra: dict[str, Any]
) -> None:
    path = tmp_path / "release.yaml"
    try:
        text = yaml.safe_dump({"version": 1, "rules": rules, **extra}, allow_unicode=True)
    except yaml.YAMLError:
        return
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        load_policy(str(path))
    except OloproofError as exc:
        _refused_naming(exc, path)


ROLES = ["input", "output", "expected", "inp", "out", "x", "case"]


@FUZZ
@given(
    names=st.lists(st.sampled_from(ROLES), min_size=0, max_size=4, unique=True),
    defaults=st.integers(min_value=0, max_value=4),
    star=st.sampled_from(["", "*args", "**kwargs", "*args, **kwargs"]),
)
def test_metric_signatures_load_in_the_contracts_order_or_are_refused(
    tmp_path: Path, names: list[str], defaults: int, star: str
) -> None:
    required = names[: max(0, len(names) - defaults)]
    optional = [f"{name}=None" for name in names[len(required) :]]
    params = ", ".join([*required, *optional, *([star] if star else [])])
    path = tmp_path / "metric.py"
    path.write_text(f"def score({params}):\n    return 1.0, {{'feedback': ''}}\n", "utf-8")
    try:
        metric = MetricFile(str(path))
    except DeclarationError as exc:
        _refused_naming(exc, path)
        return
    for name, role in zip(names, ["input", "output", "expected"], strict=False):
        assert name not in ("input", "output", "expected") or name == role, params
    verdict = metric.score({"q": 1}, {"a": 1}, {"a": 1})
    assert verdict.value == 1.0


label_cells = st.text(alphabet=string.printable + "é\x00", max_size=10)


@FUZZ
@given(
    rows=st.lists(st.lists(label_cells, min_size=0, max_size=5), max_size=5),
    header=st.sampled_from(["case_id,metric,value,note", "case_id,value", "id,metric,value", ""]),
    encoding=st.sampled_from(ENCODINGS),
    suffix=st.sampled_from([".csv", ".jsonl"]),
)
def test_labels_files_read_or_fail_clearly(
    tmp_path: Path, rows: list[list[str]], header: str, encoding: str, suffix: str
) -> None:
    if suffix == ".csv":
        text = "\n".join([header, *(",".join(row) for row in rows)])
    else:
        keys = header.split(",")
        text = "\n".join(json.dumps(dict(zip(keys, row, strict=False))) for row in rows)
    data = encoded(text, encoding)
    path = tmp_path / f"labels{suffix}"
    path.write_bytes(data)
    try:
        read = list(label_rows(path, metric_given=False))
    except OloproofError as exc:
        _refused_naming(exc, path)
        _says_encoding(exc, data)
        return
    assert _utf8(data)
    assert all(isinstance(row[1], str) for row in read)


@FUZZ
@given(
    text=st.text(alphabet=string.printable + "éß", max_size=60),
    encoding=st.sampled_from(ENCODINGS),
    suffix=st.sampled_from([".jsonl", ".json", ".csv"]),
)
def test_datasets_in_any_encoding_load_or_say_what_they_are(
    tmp_path: Path, text: str, encoding: str, suffix: str
) -> None:
    row = json.dumps({"id": "a", "input": {"q": text}, "expected": {"a": 1}}, ensure_ascii=False)
    body = {".jsonl": row, ".json": f"[{row}]", ".csv": f"id,input.q\na,{json.dumps(text)}"}
    data = encoded(body[suffix], encoding)
    path = tmp_path / f"data{suffix}"
    path.write_bytes(data)
    try:
        load_dataset(str(path))
    except OloproofError as exc:
        _refused_naming(exc, path)
        _says_encoding(exc, data)


@FUZZ
@given(
    wanted=weird_text,
    ids=st.lists(st.from_regex(r"[a-zA-Z]{0,3}[-_]?[0-9]{1,4}", fullmatch=True), max_size=30),
)
def test_close_ids_offer_only_known_ids(wanted: str, ids: list[str]) -> None:
    offered = close_ids(wanted, ids)
    assert set(offered) <= set(ids)
    assert wanted not in offered or wanted not in ids
    assert len(offered) <= 3


@FUZZ
@given(
    prefix=st.sampled_from(["", ".", "..", "../", "./", "sub/", "/abs/"]),
    name=st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True),
    suffix=st.sampled_from(["", ".py"]),
    attribute=st.sampled_from([":answer", ":", ""]),
)
def test_a_systems_reference_is_a_file_a_module_or_said_to_be_neither(
    prefix: str, name: str, suffix: str, attribute: str
) -> None:
    reference = f"{prefix}{name}{suffix}{attribute}"
    data = {"system": reference, "dataset": "d.jsonl", "evaluators": ["ExactMatch"]}
    try:
        check_run_config(data, label="c.yaml")
    except ConfigError as exc:
        assert not suffix, f"{reference} is a file path: {exc}"  # noqa: PT017
        assert "is neither a module name" in str(exc)  # noqa: PT017
        return
    assert suffix or not prefix, f"{reference} names no module and no file"
