"""The same 10,000-case workload in DeepEval and promptfoo, beside the plain loop.

Each tool runs from an environment of its own, made for this benchmark only, so
nothing of theirs enters oloproof's:

    python3 -m venv /tmp/deepeval-venv && /tmp/deepeval-venv/bin/pip install deepeval
    mkdir /tmp/promptfoo && (cd /tmp/promptfoo && npm install promptfoo)

Run with the rest of the speed figures, in the same run: `bench.speed --deepeval PYTHON
--promptfoo COMMAND`; or alone: .venv/bin/python -m bench.speed.others --deepeval
/tmp/deepeval-venv/bin/python --promptfoo /tmp/promptfoo/node_modules/.bin/promptfoo
[--cases 10000] [--repeats 3]

The workload is `bench.speed`'s: the same JSONL rows, the same trivial classifier, an
exact match on the label, each case's result kept on disk (DeepEval's results folder,
promptfoo's own SQLite database), each tool with telemetry and update checks off. The
tool and the plain loop run as fresh processes in turns, A B A B; the figures are
medians and the median ratio to the plain loop. This file is also the DeepEval side,
run by that environment's Python (`others.py deepeval DATASET FOLDER`): it imports
nothing of oloproof.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
QUIET = {
    "DEEPEVAL_TELEMETRY_OPT_OUT": "YES",
    "DEEPEVAL_UPDATE_WARNING_OPT_IN": "NO",
    "PROMPTFOO_DISABLE_TELEMETRY": "1",
    "PROMPTFOO_DISABLE_UPDATE": "1",
    "PROMPTFOO_DISABLE_SHARING": "1",
}
PROVIDER = """module.exports = class {
  id() { return "speed-bot"; }
  async callApi(prompt) { return { output: prompt.includes("refund") ? "refund" : "other" }; }
};
"""
CONFIG = """description: speed
prompts: ["{{question}}"]
providers: ["file://provider.js"]
tests: file://tests.jsonl
"""


def deepeval_side(dataset: Path, folder: Path) -> None:
    """DeepEval's run of the workload (in DeepEval's own environment)."""
    # Not in oloproof's environment, by design: this runs in DeepEval's.
    from deepeval import evaluate  # type: ignore[import-not-found]
    from deepeval.evaluate.configs import (  # type: ignore[import-not-found]
        AsyncConfig,
        DisplayConfig,
    )
    from deepeval.metrics import ExactMatchMetric  # type: ignore[import-not-found]
    from deepeval.test_case import LLMTestCase  # type: ignore[import-not-found]

    cases = []
    with dataset.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            question = row["input"]["question"]
            output = "refund" if "refund" in question else "other"
            cases.append(
                LLMTestCase(
                    input=question,
                    actual_output=output,
                    expected_output=row["expected"]["label"],
                    name=row["id"],
                )
            )
    evaluate(
        cases,
        [ExactMatchMetric()],
        async_config=AsyncConfig(run_async=False),
        display_config=DisplayConfig(
            show_indicator=False, print_results=False, results_folder=str(folder)
        ),
    )


def promptfoo_folder(dataset: Path, folder: Path) -> Path:
    """promptfoo's config, provider and tests for the workload, in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "provider.js").write_text(PROVIDER)
    (folder / "promptfooconfig.yaml").write_text(CONFIG)
    with dataset.open(encoding="utf-8") as rows, (folder / "tests.jsonl").open("w") as tests:
        for line in rows:
            row = json.loads(line)
            test = {
                "description": row["id"],
                "vars": {"question": row["input"]["question"]},
                "assert": [{"type": "equals", "value": row["expected"]["label"]}],
            }
            tests.write(json.dumps(test) + "\n")
    return folder


def timed(
    command: list[str], env: dict[str, str], cwd: Path, limit: float | None = None
) -> float | None:
    """The command's wall seconds; None when it ran past `limit` seconds and was stopped."""
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command, env=env, cwd=cwd, capture_output=True, check=False, timeout=limit
        )
    except subprocess.TimeoutExpired:
        return None
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 100):  # promptfoo exits 100 when a test fails
        raise SystemExit(f"{command[0]} failed ({done.returncode}):\n{done.stderr.decode()}")
    return seconds


def tool_commands(
    dataset: Path, folder: Path, deepeval: str | None, promptfoo: str | None
) -> dict[str, tuple[list[str], Path, dict[str, str]]]:
    """Each installed tool's command on `dataset`, the folder it runs in and its environment."""
    env = {**os.environ, **QUIET}
    tools: dict[str, tuple[list[str], Path, dict[str, str]]] = {}
    if deepeval:
        results = folder / "deepeval-results"
        command = [deepeval, str(Path(__file__)), "deepeval", str(dataset), str(results)]
        tools["deepeval"] = (command, folder, env)
    if promptfoo:
        config = promptfoo_folder(dataset, folder / "promptfoo")
        command = [promptfoo, "eval", "--no-cache", "--no-progress-bar", "--no-table"]
        tools["promptfoo"] = (command, config, env | {"PROMPTFOO_CONFIG_DIR": str(config)})
    return tools


def against_plain_loop(
    dataset: Path,
    folder: Path,
    tools: dict[str, tuple[list[str], Path, dict[str, str]]],
    repeats: int,
    limit: float | None = None,
) -> dict[str, dict[str, object]]:
    """Each tool and the plain loop in turns, A B A B: medians and the median ratio. A
    tool run past `limit` seconds is stopped, counted as at least that long, and the tool
    is not run again (a slower pace is the tool's, not the moment's)."""
    plain = [sys.executable, "-m", "bench.speed.workloads", "plain", str(dataset)]
    plain_env = {**os.environ, **QUIET, "PYTHONPATH": str(ROOT)}
    figures: dict[str, dict[str, object]] = {}
    for name, (command, cwd, tool_env) in tools.items():
        pairs: list[tuple[float, float]] = []
        for repeat in range(repeats):
            database = str(folder / f"plain-{name}-{repeat}.sqlite3")
            plain_s = timed([*plain, database], plain_env, ROOT)
            assert plain_s is not None  # the plain loop has no limit
            tool_s = timed(command, tool_env, cwd, limit)
            pairs.append((plain_s, math.inf if tool_s is None else tool_s))
            if tool_s is None:
                break
        figures[name] = _medians(pairs, dataset, limit)
    return figures


def _medians(
    pairs: list[tuple[float, float]], dataset: Path, limit: float | None
) -> dict[str, object]:
    tool_s = statistics.median(b for _, b in pairs)
    stopped = math.isinf(tool_s)
    return {
        "cases": sum(1 for _ in dataset.open(encoding="utf-8")),
        "plain_s": round(statistics.median(a for a, _ in pairs), 3),
        "tool_s": None if stopped else round(tool_s, 3),
        "tool_s_at_least": limit if stopped else None,
        "ratio": None if stopped else round(statistics.median(b / a for a, b in pairs), 1),
        "runs": [[round(a, 3), None if math.isinf(b) else round(b, 3)] for a, b in pairs],
    }


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench.speed.others", description=__doc__)
    parser.add_argument("--deepeval", help="the Python of an environment with deepeval")
    parser.add_argument("--promptfoo", help="the promptfoo command")
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--limit", type=float, help="seconds a tool run may take")
    args = parser.parse_args()
    from bench.speed.workloads import write_dataset

    figures: dict[str, object] = {"load_average_at_start": round(os.getloadavg()[0], 2)}
    with tempfile.TemporaryDirectory(prefix="oloproof-others-") as scratch:
        folder = Path(scratch)
        dataset = write_dataset(folder / "cases.jsonl", args.cases)
        tools = tool_commands(dataset, folder, args.deepeval, args.promptfoo)
        figures |= against_plain_loop(dataset, folder, tools, args.repeats, args.limit)
    figures["load_average_at_end"] = round(os.getloadavg()[0], 2)
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    if sys.argv[1:2] == ["deepeval"]:
        deepeval_side(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        main()
