"""The metric return value contract check, declaration errors, versions and config files."""

from __future__ import annotations

import pytest

from oloproof import DeclarationError, evaluate, system
from oloproof.evaluators import MetricFile
from oloproof_core.configs.run_config import load_run_config
from oloproof_core.errors import ConfigError

ROWS = [
    {"id": "a", "input": {"q": "one"}, "expected": {"label": "x"}},
    {"id": "b", "input": {"q": "two"}, "expected": {"label": "y"}},
]


@system(name="constant", version="1")
def constant(case):
    return "x"


def only_verdict(result, criterion="m"):
    return [case.verdicts[criterion] for case in result.cases]


@pytest.mark.parametrize(
    ("body", "fragments"),
    [
        ("return 1.0", ["returned float 1.0", "must return a pair"]),
        (
            "return 1.0, {'feedback': 'ok'}, 2",
            ["returned tuple (1.0, {'feedback': 'ok'}, 2)", "must return a pair"],
        ),
        ("return '1.0', {'feedback': 'ok'}", ["the score is str '1.0', not a number"]),
        ("return True, {'feedback': 'ok'}", ["the score is bool True, not a number"]),
        ("return 1.0, 'Correct.'", ["the second element is str 'Correct.', not a dict"]),
        ("return 1.0, {}", ['the dict has no key "feedback"']),
        ("return 1.0, {'feedback': 3}", ['has "feedback" = int 3, not a string']),
        (
            "return 1.0, {'feedback': 'ok', 'scores': [1.0]}",
            ['"scores" must map names (strings) to numbers, got list [1.0]'],
        ),
        (
            "return 1.0, {'feedback': 'ok', 'scores': {'format': 'high'}}",
            ['"scores" must map names (strings) to numbers'],
        ),
        (
            "return 7, {'feedback': 'ok'}",
            ["returned score 7.0, outside its range 0..1", "SCORE_RANGE = (0, 10)"],
        ),
        (
            "return 1.0, {'feedback': 'ok', 'scores': {'fields': 3}}",
            ["'m.fields' returned score 3.0, outside its range 0..1", "SUB_SCORE_RANGE"],
        ),
    ],
)
def test_every_contract_violation_is_a_missing_verdict_with_a_clear_message(
    write_metric, store, body, fragments
):
    path = write_metric(f"def score(input, output, expected=None):\n    {body}\n")

    result = evaluate(constant, ROWS, [MetricFile(path, criterion="m")], store=store)

    for verdict in only_verdict(result):
        assert verdict.missing
        assert verdict.error.startswith("ContractError: ")
        assert "'m" in verdict.error
        for fragment in fragments:
            assert fragment in verdict.error
    (metric,) = [m for m in result.metrics if m.metric == "m"]
    assert (metric.estimate, metric.n_missing) == (None, 2)


def test_the_message_shows_the_required_shape(write_metric):
    metric = MetricFile(write_metric("def score(input, output):\n    return 1\n"), criterion="m")
    with pytest.raises(Exception, match="must return a pair") as caught:
        metric.score({"q": 1}, "x")
    assert 'return 1.0, {"feedback": "Correct."}' in str(caught.value)


def test_a_declared_score_range_and_list_pairs_are_accepted(write_metric, store):
    path = write_metric("""\
        SCORE_RANGE = (0, 10)

        def score(input, output, expected=None):
            return [7, {"feedback": "Seven out of ten.", "scores": {"tone": 4}}]
        """)

    result = evaluate(constant, ROWS, [MetricFile(path, criterion="m")], store=store)

    verdict = only_verdict(result)[0]
    assert (verdict.value, verdict.scores, verdict.feedback) == (
        7.0,
        {"tone": 4.0},
        "Seven out of ten.",
    )
    estimate = next(m for m in result.metrics if m.metric == "m")
    assert estimate.score_range == (0.0, 10.0)


def test_a_two_parameter_score_is_called_without_expected(write_metric, store):
    path = write_metric("""\
        def score(input, output):
            return (1.0 if output == "x" else 0.0), {"feedback": f"saw {input['q']}"}
        """)
    metric = MetricFile(path, criterion="m")

    result = evaluate(constant, ROWS, [metric], store=store)

    assert metric.reads == ("input", "output")
    assert [v.feedback for v in only_verdict(result)] == ["saw one", "saw two"]


def test_a_metric_that_raises_is_missing_with_its_traceback(write_metric, store):
    path = write_metric("""\
        def score(input, output, expected=None):
            return 1.0 / 0, {"feedback": "never"}
        """)

    result = evaluate(constant, ROWS, [MetricFile(path, criterion="m")], store=store)

    verdict = only_verdict(result)[0]
    assert verdict.missing
    assert verdict.error == "ZeroDivisionError: float division by zero"
    assert "metric.py" in verdict.traceback
    assert "1.0 / 0" in verdict.traceback


@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        (
            "def grade(input, output):\n    return 1.0, {'feedback': ''}\n",
            "defines no function score",
        ),
        (
            "def score(output):\n    return 1.0, {'feedback': ''}\n",
            "must take (input, output) or (input, output, expected=None)",
        ),
        (
            "def score(input, output, expected, extra):\n    return 1.0, {'feedback': ''}\n",
            "must take (input, output)",
        ),
        (
            "def score(output, expected):\n    return 1.0, {'feedback': ''}\n",
            "metric.py:1: score(output, expected) is called as score(input, output), by "
            "position, so its parameter 'output' would receive the case's input",
        ),
        (
            "SCORE_RANGE = (1, 0)\ndef score(input, output):\n    return 1.0, {'feedback': ''}\n",
            "SCORE_RANGE must be a pair (lo, hi) of numbers with lo < hi",
        ),
        (
            "SCORE_RANGE = 10\ndef score(input, output):\n    return 1.0, {'feedback': ''}\n",
            "SCORE_RANGE must be a pair (lo, hi)",
        ),
        ("import no_such_module_here\n", "failed to load: ModuleNotFoundError"),
        (
            "REWARD_SPEC = {'weights': {'accuracy': 1, 'speed': 0}}\n"
            "def score(input, output):\n    return 1.0, {'feedback': ''}\n",
            "missing key 'weights.cost'",
        ),
    ],
)
def test_a_broken_metric_file_fails_when_it_is_declared(write_metric, source, fragment):
    path = write_metric(source)
    with pytest.raises(DeclarationError, match=r"metric file|REWARD_SPEC") as caught:
        MetricFile(path)
    assert fragment in str(caught.value)
    assert str(path) in str(caught.value)


def test_criterion_defaults_to_the_folder_of_metric_py_or_the_file_stem(write_metric):
    source = "def score(input, output):\n    return 1.0, {'feedback': ''}\n"
    assert MetricFile(write_metric(source, "tone/metric.py")).criterion == "tone"
    assert MetricFile(write_metric(source, "politeness.py")).criterion == "politeness"
    assert MetricFile(write_metric(source, "tone/metric.py"), criterion="t").criterion == "t"


def test_editing_the_file_changes_the_version_and_rejudges_in_the_same_process(write_metric, store):
    path = write_metric("def score(input, output):\n    return 1.0, {'feedback': 'A'}\n")
    metric = MetricFile(path, criterion="m")
    first = evaluate(constant, ROWS, [metric], store=store)
    again = evaluate(constant, ROWS, [metric], store=store)
    version = metric.version

    # Same length and (very likely) the same modification time: only the content differs.
    path.write_text(
        "def score(input, output):\n    return 0.0, {'feedback': 'B'}\n", encoding="utf-8"
    )
    edited = evaluate(constant, ROWS, [metric], store=store)

    assert first.provenance["judging"]["m"]["judged"] == 2
    assert again.provenance["judging"]["m"]["cached"] == 2
    assert metric.version != version
    assert edited.provenance["judging"]["m"]["judged"] == 2
    assert [v.feedback for v in only_verdict(edited)] == ["B", "B"]
    assert MetricFile(path, criterion="m").version == metric.version


def test_an_unchanged_file_keeps_its_version_across_instances(write_metric):
    path = write_metric("def score(input, output):\n    return 1.0, {'feedback': ''}\n")
    assert MetricFile(path, criterion="m").version == MetricFile(path, criterion="m").version
    assert MetricFile(path, criterion="m").version != MetricFile(path, criterion="n").version


def test_a_config_file_names_a_metric_file_relative_to_its_folder(tmp_path, write_metric):
    write_metric(
        "def score(input, output):\n    return 1.0, {'feedback': ''}\n", "checks/tone/metric.py"
    )
    (tmp_path / "checks" / "bot.py").write_text(
        "def answer(case):\n    return 'x'\n", encoding="utf-8"
    )
    config = tmp_path / "checks" / "oloproof.yaml"
    config.write_text(
        "system: bot.py:answer\ndataset: data.jsonl\nevaluators:\n  - tone/metric.py\n",
        encoding="utf-8",
    )

    loaded = load_run_config(str(config))

    (metric,) = loaded.evaluators
    assert isinstance(metric, MetricFile)
    assert metric.criterion == "tone"
    assert metric.path == str(tmp_path / "checks" / "tone" / "metric.py")


def test_a_config_naming_a_missing_metric_file_says_where(tmp_path):
    config = tmp_path / "oloproof.yaml"
    (tmp_path / "bot.py").write_text("def answer(case):\n    return 'x'\n", encoding="utf-8")
    config.write_text(
        "system: bot.py:answer\ndataset: data.jsonl\nevaluators:\n  - nowhere.py\n",
        encoding="utf-8",
    )
    with pytest.raises(
        ConfigError,
        match=r"oloproof.yaml:3: evaluators\[0\]: metric file "
        r".*nowhere.py not found",
    ):
        load_run_config(str(config))


def test_a_metric_reading_measurements_through_a_helper_module_is_refused(
    tmp_path, write_metric, store
):
    (tmp_path / "helpers_for_metric.py").write_text(
        "from skynet import service_cost\n\ndef cost():\n    return service_cost()\n",
        encoding="utf-8",
    )
    path = write_metric("""\
        import helpers_for_metric

        def score(input, output):
            return 1.0, {"feedback": str(helpers_for_metric.cost())}
        """)

    with pytest.raises(
        Exception,
        match="import reward, observation or service_cost from skynet in the metric file itself",
    ):
        evaluate(constant, ROWS, [MetricFile(path, criterion="m")], store=store)
