"""Every way people write a system runs it in its sandbox, and nothing it does lowers that.

The README's first example as a script with top-level code, the seed API page's
examples, a notebook cell under a real kernel, a module loaded from a path and a
pytest test: each run records `measurements: protected`, and the seed's REWARD_SPEC
metric scores speed and cost on it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.journeys.conftest import notebook_printed, readme_block, run_user

pytestmark = pytest.mark.skipif(
    not os.path.exists("/usr/bin/bwrap"), reason="the sandbox needs bubblewrap (scripts/test.sh)"
)

REWARD_METRIC = """\
from skynet import reward

REWARD_SPEC = {
    "weights": {"accuracy": 0.7, "speed": 0.2, "cost": 0.1},
    "accuracy": {},
    "speed": {"reference": 2000},
    "cost": {"reference": 0.01},
}


def score(input, output, expected=None):
    ok = output == expected["label"]
    return reward(REWARD_SPEC, 1.0 if ok else 0.0, "Correct." if ok else "Wrong label.")
"""

LABEL_SYSTEM = """
@system(name="labeller", version="1")
def label_only(case):
    return "refund" if "refund" in case["question"].lower() else "other"
"""

REPORT = """
import json as _json
print("REPORT " + _json.dumps({
    "measurements": result.provenance["execution"]["measurements"],
    "start": result.provenance["execution"].get("start"),
    "estimates": {m.metric: m.estimate for m in result.metrics},
}))
"""


def report(output: str) -> dict:
    lines = [line for line in output.splitlines() if line.startswith("REPORT ")]
    assert lines, output
    return json.loads(lines[-1].removeprefix("REPORT "))


def assert_speed_and_cost_scored(found: dict) -> None:
    estimates = found["estimates"]
    assert estimates["asc.speed"] > 0.9, estimates  # a trivial system: near 1, never 0
    assert estimates["asc.cost"] == 1.0, estimates  # no model call: nothing spent


def test_the_readme_first_example_as_a_script_runs_protected(user_folder: Path) -> None:
    script = readme_block("In 30 seconds")
    (user_folder / "quick.py").write_text(script + REPORT, encoding="utf-8")

    done = run_user(["python", "quick.py"], user_folder)

    assert done.returncode == 0, done.stderr
    assert "exact_label 1.0 lower=0.8842966917779722 upper=1.0 30 0" in done.stdout
    found = report(done.stdout)
    assert found["measurements"] == "protected"
    assert found["start"] == "value"
    assert "not protected" not in done.stderr


def test_the_seed_api_examples_and_a_reward_metric_run_protected(user_folder: Path) -> None:
    (user_folder / "metric.py").write_text(REWARD_METRIC, encoding="utf-8")
    (user_folder / "release.yaml").write_text(
        "version: 1\nrules:\n  - metric: exact_label\n    min: 0.8\n", encoding="utf-8"
    )
    script = (
        "from oloproof import evaluate, system, current_case\n"
        "from oloproof.evaluators import ExactMatch, Contains, JsonSchema, Regex, RubricJudge, "
        "evaluator\n"
        "from oloproof.evaluators import MetricFile\n\n"
        '@system(name="support-bot", version="1")\n'
        "def answer(case):\n"
        '    return {"label": "refund" if "refund" in case["question"].lower() else "other"}\n\n'
        '@evaluator(criterion="known_label", reads=("output",))\n'
        "def known_label(case):\n"
        '    return case.output["label"] in {"refund", "other"}\n\n'
        'result = evaluate(system=answer, dataset="data/example.jsonl", '
        "evaluators=[known_label])\n"
        "for metric in result.metrics:\n"
        "    print(metric.metric, metric.estimate, metric.interval, metric.n_observed, "
        "metric.n_missing)\n"
        "result = evaluate(\n"
        "    system=answer,\n"
        '    dataset="data/example.jsonl",\n'
        '    evaluators=[ExactMatch(criterion="exact_label", field="label")],\n'
        '    policy="release.yaml",\n'
        ")\n"
        "print(result.gate)\n"
        + LABEL_SYSTEM
        + 'result = evaluate(label_only, "data/example.jsonl", '
        '[MetricFile("metric.py", criterion="asc")])\n' + REPORT
    )
    (user_folder / "seed_page.py").write_text(script, encoding="utf-8")

    done = run_user(["python", "seed_page.py"], user_folder)

    assert done.returncode == 0, done.stderr
    assert "known_label 1.0 lower=0.8842966917779722 upper=1.0 30 0" in done.stdout
    assert "gate PASS" in done.stdout
    found = report(done.stdout)
    assert found["measurements"] == "protected"
    assert_speed_and_cost_scored(found)


def test_a_module_loaded_by_path_runs_protected(user_folder: Path) -> None:
    (user_folder / "lib").mkdir()
    (user_folder / "lib" / "labeller.py").write_text(
        "from oloproof import system\n" + LABEL_SYSTEM, encoding="utf-8"
    )
    (user_folder / "metric.py").write_text(REWARD_METRIC, encoding="utf-8")
    (user_folder / "by_path.py").write_text(
        "import importlib.util, sys\n"
        "from oloproof import evaluate\n"
        "from oloproof.evaluators import MetricFile\n"
        'spec = importlib.util.spec_from_file_location("my_labeller", "lib/labeller.py")\n'
        "module = importlib.util.module_from_spec(spec)\n"
        'sys.modules["my_labeller"] = module\n'
        "spec.loader.exec_module(module)\n"
        'result = evaluate(module.label_only, "data/example.jsonl", '
        '[MetricFile("metric.py", criterion="asc")])\n' + REPORT,
        encoding="utf-8",
    )

    done = run_user(["python", "by_path.py"], user_folder)

    assert done.returncode == 0, done.stderr
    found = report(done.stdout)
    assert (found["measurements"], found["start"]) == ("protected", "value")
    assert_speed_and_cost_scored(found)


def test_a_system_defined_in_a_pytest_test_runs_protected(user_folder: Path) -> None:
    (user_folder / "metric.py").write_text(REWARD_METRIC, encoding="utf-8")
    (user_folder / "test_release.py").write_text(
        "from oloproof import evaluate, system\n"
        "from oloproof.evaluators import MetricFile\n\n"
        "def test_release():\n"
        + "\n".join("    " + line for line in LABEL_SYSTEM.strip().splitlines())
        + '\n    result = evaluate(label_only, "data/example.jsonl", '
        '[MetricFile("metric.py", criterion="asc")])\n'
        + "\n".join("    " + line for line in REPORT.strip().splitlines())
        + "\n",
        encoding="utf-8",
    )

    done = run_user(["python", "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider"], user_folder)

    assert done.returncode == 0, done.stdout + done.stderr
    found = report(done.stdout)
    assert (found["measurements"], found["start"]) == ("protected", "value")
    assert_speed_and_cost_scored(found)


def test_a_notebook_cell_runs_protected(user_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (user_folder / "metric.py").write_text(REWARD_METRIC, encoding="utf-8")
    cells = [
        "from oloproof import evaluate, system\nfrom oloproof.evaluators import MetricFile",
        LABEL_SYSTEM.strip(),
        'result = evaluate(label_only, "data/example.jsonl", '
        '[MetricFile("metric.py", criterion="asc")])\n' + REPORT,
    ]
    found = report(notebook_printed(cells, user_folder, monkeypatch)[2])
    assert (found["measurements"], found["start"]) == ("protected", "value")
    assert_speed_and_cost_scored(found)


SNEAKY = """
import os

if os.getuid() != 0:  # in the sandbox: refuse, hoping to be run outside it
    raise ImportError("this system only imports as root")

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "ran-as-root"), "w") as f:
    f.write("imported outside the sandbox")

from oloproof import system


@system(name="sneaky", version="1")
def answer(case):
    return {"label": "refund"}
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="the system tells the sandbox by its uid")
def test_a_system_that_refuses_its_sandbox_is_never_run_elsewhere(user_folder: Path) -> None:
    (user_folder / "sneaky.py").write_text(SNEAKY, encoding="utf-8")
    (user_folder / "oloproof.yaml").write_text(
        "system: sneaky:answer\ndataset: data/example.jsonl\nevaluators:\n"
        "  - ExactMatch: {criterion: exact_label, field: label}\n",
        encoding="utf-8",
    )

    done = run_user(["oloproof", "run", "oloproof.yaml"], user_folder)

    assert done.returncode == 3, done.stdout + done.stderr
    assert "could not be loaded in the sandbox" in done.stderr
    assert "this system only imports as root" in done.stderr
    assert "Traceback (most recent call last)" not in done.stderr
    # Loading the config imports the module here once, to check it (as root, before any
    # case): that is the parent's import, not a run; no case ran in any process.
    assert "exact_label" not in done.stdout
