"""The system's module is imported once for a run: the process that declared it serves it.

And a process that serves an optimization's candidates sees the dataset's file no more
than a run's processes do: the answers (train, val and the sealed test split) are hidden
from the system in the search and in the proof alike.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.journeys.conftest import run_user
from tests.support.fake_openai import FakeOpenAI
from tests.support.optimize_task import METRIC_FILE, model_environment, rows, serve_task

PEEKING_SYSTEM = """\
import json, os, sys

from oloproof import component, system
from oloproof.models import complete

HERE = os.path.dirname(os.path.abspath(__file__))
print("IMPORTED " + json.dumps({"pid": os.getpid()}), file=sys.stderr, flush=True)


def _peek():
    try:
        with open(os.path.join(HERE, "cases.jsonl"), encoding="utf-8") as handle:
            return "expected" in handle.read()
    except OSError:
        return False


@system(name="calc", version="1", components={"system_prompt": "You are a calculator."})
def answer(case):
    print("PEEK " + json.dumps({"answers": _peek()}), file=sys.stderr, flush=True)
    return {"answer": complete(case["question"], instructions=component("system_prompt"))}
"""


def _project(folder: Path, config: dict[str, object]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "calc.py").write_text(PEEKING_SYSTEM, encoding="utf-8")
    (folder / "exact.py").write_text(METRIC_FILE, encoding="utf-8")
    with (folder / "cases.jsonl").open("w", encoding="utf-8") as handle:
        for row in rows(12):
            handle.write(json.dumps(row) + "\n")
    base = {"system": "calc.py:answer", "dataset": "cases.jsonl", "evaluators": ["exact.py"]}
    (folder / "oloproof.yaml").write_text(json.dumps({**base, **config}), encoding="utf-8")


def _reports(stderr: str, tag: str) -> list[dict[str, object]]:
    return [json.loads(found) for found in re.findall(rf"{tag} (\{{[^{{}}]*\}})", stderr)]


def test_a_run_with_one_process_imports_its_system_once(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    serve_task(fake_openai)
    folder = tmp_path / "calc"
    _project(folder, {"concurrency": 1})

    done = run_user(
        ["oloproof", "run", "oloproof.yaml"], folder, **model_environment(fake_openai.base_url)
    )

    assert done.returncode in (0, 1), done.stdout + done.stderr  # 1: the seed's answers fail
    imports = _reports(done.stderr, "IMPORTED")
    # Declared and served by one process: imported once, not once more for the cases.
    assert len(imports) == 1, done.stderr
    assert len(_reports(done.stderr, "PEEK")) == 12
    assert not any(item["answers"] for item in _reports(done.stderr, "PEEK"))


def test_a_config_outside_the_project_still_imports_its_system_once(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    # The project's module is on the path (PYTHONPATH=., as for a package of one's own);
    # its configs in a folder of their own beside the project. The module is found on
    # the path either way, so the process that declared it is the one its pool would
    # start (shown the path, not the configs' folder), and serves the cases.
    serve_task(fake_openai)
    folder = tmp_path / "calc"
    _project(folder, {})
    configs = tmp_path / "evals"
    configs.mkdir()
    config = {
        "system": "calc:answer",
        "dataset": "../calc/cases.jsonl",
        "evaluators": ["../calc/exact.py"],
        "concurrency": 1,
    }
    (configs / "nightly.yaml").write_text(json.dumps(config), encoding="utf-8")

    done = run_user(
        ["oloproof", "run", "../evals/nightly.yaml"],
        folder,
        PYTHONPATH=".",
        **model_environment(fake_openai.base_url),
    )

    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert len(_reports(done.stderr, "IMPORTED")) == 1, done.stderr
    assert len(_reports(done.stderr, "PEEK")) == 12
    assert not any(item["answers"] for item in _reports(done.stderr, "PEEK"))


def test_an_optimizations_system_cannot_read_the_dataset(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    serve_task(fake_openai)
    folder = tmp_path / "calc"
    _project(folder, {"engine": "gepa", "budget": {"metric_calls": 40}, "concurrency": 2})

    done = run_user(
        ["oloproof", "optimize", "oloproof.yaml"],
        folder,
        timeout=300,
        **model_environment(fake_openai.base_url),
    )

    assert done.returncode in (0, 1), done.stdout + done.stderr
    peeks = _reports(done.stderr, "PEEK")
    assert peeks, done.stderr  # the search and the proof ran the system
    assert not any(item["answers"] for item in peeks), "the system read the answers"


def test_an_optimization_from_a_script_hides_the_dataset_too(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    serve_task(fake_openai)
    folder = tmp_path / "calc"
    _project(folder, {})
    (folder / "optimize_it.py").write_text(
        "from oloproof import optimize\n"
        "from oloproof.evaluators import MetricFile\n"
        "from calc import answer\n\n"
        'result = optimize(answer, "cases.jsonl", [MetricFile("exact.py")], '
        'budget={"metric_calls": 40}, engine="gepa")\n'
        "print(result.winner)\n",
        encoding="utf-8",
    )

    done = run_user(
        ["python", "optimize_it.py"], folder, timeout=300, **model_environment(fake_openai.base_url)
    )

    assert done.returncode == 0, done.stdout + done.stderr
    peeks = _reports(done.stderr, "PEEK")
    assert peeks, done.stderr
    assert not any(item["answers"] for item in peeks), "the system read the answers"
