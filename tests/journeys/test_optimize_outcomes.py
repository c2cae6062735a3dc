"""`oloproof optimize optimize.yaml` as examples/optimize_calc shows it, from a user's folder.

The example's files are copied to a folder outside the repository and the command runs
there in a fresh process, recording into that folder's store, with the local
OpenAI-compatible server as the system's and the reflection's model. What a CI job
reads is checked: the exit code, the message, the record left in the store, and how
many model calls and metric calls were spent.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.journeys.conftest import REPO, run_user, user_env
from tests.support.fake_openai import FakeOpenAI, Reply, Request
from tests.support.optimize_task import (
    REFLECT_MODEL,
    SEED_PROMPT,
    TASK_MODEL,
    model_environment,
    responder,
    serve_task,
)

EXAMPLE = REPO / "examples" / "optimize_calc"
VAL_CASES = 4
"""The example's 24 cases, split by id: 13 train, 4 val, 7 test."""

STORE_REPORT = """
import json
from oloproof.cli._django import django_ready

django_ready()
from runs.access import LOCAL
from runs.models import Gate, Optimization
from runs.selectors.gates import gates_pending

pending = set(gates_pending(user=LOCAL).values_list("run_id", flat=True))
print(json.dumps([
    {
        "status": o.status,
        "error": o.error,
        "claimed_by": o.claimed_by,
        "winner_index": o.winner_index,
        "seed_test_run": o.seed_test_run_id,
        "winner_test_run": o.winner_test_run_id,
        "gate": Gate.objects.filter(run_id=o.winner_test_run_id).values_list(
            "outcome", flat=True).first(),
        "gate_pending": o.winner_test_run_id in pending,
        "candidates": o.candidates.count(),
    }
    for o in Optimization.objects.order_by("pk")
]))
"""


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """examples/optimize_calc, copied into a user's folder outside the repository."""
    folder = tmp_path / "calc-opt"
    shutil.copytree(EXAMPLE, folder)
    assert REPO not in folder.parents
    return folder


def set_budget(folder: Path, **budget: Any) -> None:
    config = yaml.safe_load((folder / "optimize.yaml").read_text(encoding="utf-8"))
    config["budget"] = budget
    (folder / "optimize.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


def optimize(folder: Path, server: FakeOpenAI, *args: str, **env: str) -> Any:
    return run_user(
        ["oloproof", "optimize", "optimize.yaml", *args],
        folder,
        timeout=600,
        **model_environment(server.base_url),
        **env,
    )


def recorded(folder: Path) -> list[dict[str, Any]]:
    """The optimizations in the folder's store, as the dashboard would read them."""
    done = run_user(["python", "-c", STORE_REPORT], folder)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def asked(server: FakeOpenAI, model: str) -> int:
    return server.models_asked().count(model)


def never_better(request: Request) -> Reply:
    """A task model that answers in a sentence whatever its prompt says: no candidate
    can beat the seed."""
    if request.model == REFLECT_MODEL:
        return Reply("```\nYou are a careful calculator.\n```")
    return Reply("The answer is 4.")


def test_a_seed_that_no_candidate_beats_is_gated_and_a_policy_it_fails_exits_1(
    example: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.respond_with(never_better)
    set_budget(example, metric_calls=20)

    done = optimize(example, fake_openai)

    assert done.returncode == 1, done.stdout + done.stderr
    assert "no candidate beat the seed" in done.stderr
    assert "gate on test: fail" in done.stdout
    [record] = recorded(example)
    assert record["status"] == "succeeded"
    assert record["winner_index"] == 0
    assert record["winner_test_run"] == record["seed_test_run"] is not None
    assert record["gate"] == "fail"
    assert record["gate_pending"]  # in the approvals queue like any other gate


def test_a_metric_of_the_wrong_shape_stops_the_search_at_its_first_evaluation(
    example: Path, fake_openai: FakeOpenAI
) -> None:
    serve_task(fake_openai)
    (example / "exact.py").write_text(
        "def score(input, output, expected=None):\n    return 1.0\n", encoding="utf-8"
    )

    done = optimize(example, fake_openai)

    assert done.returncode == 3, done.stdout + done.stderr
    assert "broke the metric contract" in done.stderr
    assert "returned float 1.0" in done.stderr
    assert "score() must return a pair" in done.stderr
    assert "Traceback" not in done.stderr
    # The seed's val evaluation, and nothing after it: no reflection, no test run.
    assert asked(fake_openai, TASK_MODEL) == VAL_CASES
    assert asked(fake_openai, REFLECT_MODEL) == 0
    [record] = recorded(example)
    assert record["status"] == "failed"
    assert "broke the metric contract" in record["error"]
    assert "score() must return a pair" in record["error"]


def test_a_typo_in_the_policy_is_refused_before_any_model_call(
    example: Path, fake_openai: FakeOpenAI
) -> None:
    serve_task(fake_openai)
    policy = example / "release.yaml"
    policy.write_text(policy.read_text().replace("metric: exact", "metric: exatc"))

    done = optimize(example, fake_openai)

    assert done.returncode == 3, done.stdout + done.stderr
    assert "release.yaml:3: rules[0]: unknown metric 'exatc'" in done.stderr
    assert "did you mean 'exact'?" in done.stderr
    assert fake_openai.request_count == 0
    assert recorded(example) == []


def test_a_missing_engine_package_is_refused_with_how_to_install_it(
    example: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    """An install without `gepa`, simulated: a sitecustomize module on PYTHONPATH makes
    every import of `gepa` fail in the command's process, as it fails where the package
    is not installed. Nothing else about the install changes."""
    serve_task(fake_openai)
    blocker = tmp_path / "without-gepa"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        textwrap.dedent("""\
            import sys


            class WithoutGepa:
                def find_spec(self, name, path=None, target=None):
                    if name == "gepa" or name.startswith("gepa."):
                        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                    return None


            sys.meta_path.insert(0, WithoutGepa())
            """),
        encoding="utf-8",
    )

    done = optimize(example, fake_openai, PYTHONPATH=str(blocker))

    assert done.returncode == 3, done.stdout + done.stderr
    assert "engine gepa needs the 'gepa' package" in done.stderr
    assert "-m pip install 'gepa>=0.1.4,<0.2'" in done.stderr
    assert "Traceback" not in done.stderr
    assert "internal error" not in done.stderr
    assert fake_openai.request_count == 0
    assert recorded(example) == []


def test_a_candidate_without_any_score_is_shown_as_missing(
    example: Path, fake_openai: FakeOpenAI
) -> None:
    serve_task(fake_openai)
    metric = example / "exact.py"
    metric.write_text(metric.read_text().replace('expected["answer"]', 'expected["answr"]'))
    set_budget(example, metric_calls=12)

    done = optimize(example, fake_openai)

    assert f"candidate 0 (1+opt1.0): val missing ({VAL_CASES} of {VAL_CASES} cases)" in (
        done.stderr
    )
    assert "WARNING" not in done.stderr
    assert "failed on on_valset_evaluated" not in done.stderr
    assert done.returncode == 2, done.stdout + done.stderr  # every test case missing
    assert recorded(example)[0]["gate"] == "inconclusive"


DSPY_PROGRAM = f"""\
import os

import dspy

dspy.configure(
    lm=dspy.LM(
        "openai/{TASK_MODEL}",
        api_base=os.environ["OLOPROOF_SYSTEM_BASE_URL"],
        api_key="none",
        cache=False,
        num_retries=0,
    )
)
program = dspy.Predict(dspy.Signature("question -> answer", {SEED_PROMPT!r}))
"""


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["gepa", "auto", "dspy-gepa"])
def test_no_engine_spends_past_its_metric_call_budget(
    engine: str, example: Path, fake_openai: FakeOpenAI
) -> None:
    serve_task(fake_openai)
    budget = 25
    config = yaml.safe_load((example / "optimize.yaml").read_text(encoding="utf-8"))
    config.update(engine=engine, budget={"metric_calls": budget})
    if engine == "dspy-gepa":
        pytest.importorskip("dspy")
        (example / "program.py").write_text(DSPY_PROGRAM, encoding="utf-8")
        config.update(system="program.py:program", name="calc-dspy", version="1")
    (example / "optimize.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")

    done = optimize(
        example,
        fake_openai,
        "--json",
        "outcome.json",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        OLOPROOF_SYSTEM_ENV="LITELLM_LOCAL_MODEL_COST_MAP",  # no network to fetch prices
    )

    # The search's figures are what this test reads; a DSPy program's test runs reach its
    # model from their sandbox through the metering gateway.
    assert done.returncode in (0, 1, 2), done.stdout + done.stderr
    used = json.loads((example / "outcome.json").read_text())["budget_used"]
    assert used["stopped_by"] == "metric_calls"
    assert used["metric_calls"] <= budget
    # Each metric call runs the system at most once (a revisited case is served from
    # the records); the test split's two runs come after the search, outside the budget.
    test_runs = 2 * 7
    assert asked(fake_openai, TASK_MODEL) - test_runs <= budget


def test_ctrl_c_during_the_search_ends_the_command_and_fails_the_record(
    example: Path, fake_openai: FakeOpenAI
) -> None:
    """The ledger is kept by the store's own process: a terminal's Ctrl-C reaches both,
    and the optimization is still recorded as failed, interrupted, not left running."""
    held = threading.Event()

    def reflection_hangs(request: Request) -> Reply:
        if request.model == REFLECT_MODEL:
            held.wait(120)
        return responder(request)

    fake_openai.respond_with(reflection_hangs)
    command = subprocess.Popen(
        [str(Path(sys.executable).parent / "oloproof"), "optimize", "optimize.yaml"],
        cwd=example,
        env=user_env(**model_environment(fake_openai.base_url)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # Ctrl-C as a terminal's foreground job has it, whatever this process was given.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 120
        while REFLECT_MODEL not in fake_openai.models_asked():
            assert command.poll() is None, "the command ended before its first reflection"
            assert time.monotonic() < deadline, "no reflection asked within two minutes"
            time.sleep(0.1)
        os.killpg(command.pid, signal.SIGINT)  # what a terminal sends the whole group
        _, stderr = command.communicate(timeout=60)
    finally:
        held.set()
        command.kill()

    assert command.returncode == 130, stderr
    assert "oloproof: interrupted" in stderr
    assert "Traceback" not in stderr
    [record] = recorded(example)
    assert record["status"] == "failed"
    assert record["error"] == "interrupted"
    assert record["candidates"] == 1  # the seed, scored before the reflection was asked
