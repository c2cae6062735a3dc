"""What starting oloproof imports: only what the command at hand needs.

Each check is a fresh interpreter, so nothing an earlier test imported hides a change
that makes the package, or building the command line, pull in a heavy dependency.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.faces.conftest import clean_env, write_project
from tests.support.embedded import embedded_store_env

HEAVY = (
    "scipy",
    "django",
    "ninja",
    "openai",
    "numpy.linalg",
    "jsonschema",
    "dspy",
    "gepa",
    "importlib.metadata",  # the version is a literal (oloproof_core/_util/version.py)
)


def imported_after(code: str, env: dict[str, str] | None = None) -> set[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env=env,
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


@pytest.mark.parametrize(
    "code",
    [
        "import oloproof",
        "from oloproof.cli import build_parser; build_parser()",
        "from oloproof.cli import build_parser; build_parser().parse_args(['run', 'x.yaml'])",
        # a run loads the statistics while its system's processes start, not before
        "from oloproof_core import plan_run, run_evaluation, load_dataset",
    ],
)
def test_start_up_imports_no_heavy_dependency(code: str) -> None:
    heavy = sorted(
        name
        for name in imported_after(code)
        if any(name == top or name.startswith(top + ".") for top in HEAVY)
    )
    assert heavy == [], f"{code!r} imported {heavy[:8]}"


def _plain_pass_fail_run(tmp_path: Path) -> str:
    """Code that runs a model-free system over one case, judged pass/fail."""
    (tmp_path / "plain_system.py").write_text(
        "from oloproof import system\n\n"
        "@system(name='plain', version='1')\n"
        "def answer(case):\n    return {'label': 'x'}\n"
    )
    return (
        f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import plain_system\n"
        "from oloproof import evaluate\nfrom oloproof.evaluators import ExactMatch\n"
        "rows = [{'id': 'a', 'input': {'q': 1}, 'expected': {'label': 'x'}}]\n"
        "check = ExactMatch(criterion='label', field='label')\n"
        "result = evaluate(plain_system.answer, rows, [check], record=False)\n"
        "execution = result.provenance['execution']\n"
        "assert execution['isolation'] == 'process', execution\n"
        "assert result.metric('label').interval.lower > 0, result.metrics\n"
    )


def test_a_run_of_a_system_that_calls_no_model_starts_no_model_gateway(tmp_path: Path) -> None:
    code = _plain_pass_fail_run(tmp_path) + (
        "assert execution['model_gateway'].startswith('not started'), execution"
    )
    assert "aiohttp" not in imported_after(code, env=embedded_store_env(tmp_path / ".oloproof"))


def test_a_pass_fail_run_loads_neither_scipy_nor_numpy(tmp_path: Path) -> None:
    """Its exact interval needs only the beta quantile (`stats._beta_quantile`); the
    betting methods and their NumPy load for scores and clusters only."""
    loaded = imported_after(
        _plain_pass_fail_run(tmp_path), env=embedded_store_env(tmp_path / ".oloproof")
    )
    assert "oloproof_core.stats._clopper_pearson" in loaded, "the probe must compute the interval"
    assert sorted(name for name in loaded if name.split(".")[0] in {"scipy", "numpy"}) == []


def test_recording_a_pass_fail_run_loads_no_numpy(tmp_path: Path) -> None:
    """The store's own process (Django set up, as here) writes the run, its verdicts and
    its value columns without the comparison's arrays."""
    code = (
        "import os, django\n"
        "os.environ['DJANGO_SETTINGS_MODULE'] = 'evalsite.settings'\n"
        "django.setup()\n"
        + _plain_pass_fail_run(tmp_path).replace("record=False", "record=True")
        + "from metrics.models import RunValueColumns\n"
        "assert RunValueColumns.objects.filter(run_id=int(result.run_id)).count() == 1\n"
    )
    loaded = imported_after(code, env=embedded_store_env(tmp_path / ".oloproof"))
    assert "runs.writers.recording" in loaded, "the probe must record in its own process"
    assert sorted(name for name in loaded if name.split(".")[0] in {"scipy", "numpy"}) == []


def test_a_sync_systems_process_loads_none_of_the_parents_side(tmp_path: Path) -> None:
    """It serves cases: the pool, the metering and asyncio are the parent's. Its module
    may define an evaluator beside the system: the evaluators' model client (asyncio)
    loads only where a model judge is used."""
    watched = (
        "asyncio",
        "oloproof_core.execution.running",
        "oloproof_core.execution.isolation._pool",
    )
    (tmp_path / "modules_system.py").write_text(
        "import sys\nfrom oloproof import system\nfrom oloproof.evaluators import evaluator\n\n"
        "@system(name='modules', version='1')\n"
        "def answer(case):\n"
        f"    return {{'loaded': [m for m in {watched!r} if m in sys.modules]}}\n"
    )
    code = (
        f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import modules_system\n"
        "from oloproof import evaluate\nfrom oloproof.evaluators import ExactMatch\n"
        "rows = [{'id': 'a', 'input': {'q': 1}, 'expected': {'loaded': []}}]\n"
        "check = ExactMatch(criterion='loaded', field='loaded')\n"
        "result = evaluate(modules_system.answer, rows, [check], record=False)\n"
        "assert result.provenance['execution']['isolation'] == 'process'\n"
        "print(result.cases[0].error or result.cases[0].output)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip().splitlines()[-1] == "{'loaded': []}"


def test_the_installed_version_is_the_source_version() -> None:
    from importlib.metadata import version

    import oloproof

    printed = subprocess.run(
        [sys.executable, "-m", "oloproof", "--version"], capture_output=True, text=True, check=True
    )
    assert version("oloproof") == oloproof.__version__
    assert printed.stdout.strip() == f"oloproof {oloproof.__version__}"


def test_opening_the_local_store_loads_no_celery(tmp_path: Path) -> None:
    """A local run records through Django but hands nothing to the workers."""
    env = embedded_store_env(tmp_path / ".oloproof")
    loaded = imported_after("from oloproof._store import default_store; default_store()", env)
    assert "runs.models" in loaded, "the probe must really have opened the store"
    late = sorted(name for name in loaded if name.split(".")[0] == "celery" or name == "runs.tasks")
    assert late == [], f"opening the store imported {late[:8]}"


def test_handing_work_over_loads_the_app_and_its_tasks(tmp_path: Path) -> None:
    env = embedded_store_env(tmp_path / ".oloproof")
    code = (
        "from oloproof._platform import django_setup; django_setup()\n"
        "from runs.workers.dispatch import FINALISE_TASK, celery_app\n"
        "assert FINALISE_TASK in celery_app().tasks"
    )
    assert "runs.tasks" in imported_after(code, env)


def test_the_command_running_a_sync_system_that_calls_no_model_loads_no_asyncio(
    tmp_path: Path,
) -> None:
    """A sync system judged by `ExactMatch` and recorded: the command's own process loads
    neither asyncio, nor the model client, nor NumPy or SciPy. The other built-in
    evaluators, metric files, async systems and evaluators and the gateway's server load
    them when they are used."""
    write_project(tmp_path)
    code = (
        f"import os; os.chdir({str(tmp_path)!r})\n"
        "from oloproof.cli import main\n"
        "assert main(['run', 'oloproof.yaml']) == 0\n"
    )
    loaded = imported_after(code, env=clean_env())
    assert "oloproof_core.execution.isolation._pool" in loaded, (
        "the probe must run its system in processes"
    )
    assert "oloproof._store_process" in loaded, "the probe must record through the store"
    unwanted = sorted(
        name
        for name in loaded
        if name.split(".")[0] in ("asyncio", "numpy", "scipy")
        or name.startswith("oloproof_core.models._client")
    )
    # Its table asks each metric for a labelled figure: with no labels, none is computed.
    assert unwanted == []


def test_the_probes_process_loads_none_of_the_runs_side() -> None:
    """It imports the config's code and declares it: starting probes and sandboxes is the
    run's process's work."""
    loaded = imported_after("import oloproof_core.configs.code._in_probe")

    run_side = ("oloproof_core.configs.code._probe", "oloproof_core.execution.isolation._sandbox")
    assert sorted(name for name in loaded if name in run_side) == []
    assert "subprocess" not in loaded
