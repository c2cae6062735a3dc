"""The run-config schema: each key of `oloproof.yaml`, what it means, what it takes.

The one statement of it: the command line, the REST API, the dashboard's New-run form
and the workers all read and check configs through `RUN_CONFIG_FIELDS`.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from oloproof_core.evaluation.auto_repeats import AUTO_MOST
from oloproof_core.evaluation.repeats import MAX_JUDGE_REPEATS, MAX_REPEATS


@dataclass(frozen=True, slots=True)
class RunConfigField:
    """One key of a run config: what it means and what shape its value takes.

    The one statement of the run-config schema: the command line, the REST API, the
    dashboard's New-run form and the workers all read and check configs through it.
    """

    name: str
    meaning: str
    kind: Literal[
        "import",
        "path",
        "evaluators",
        "string",
        "positive_int",
        "repeats",
        "positive_number",
        "confidence",
        "isolation",
        "sandbox",
        "mapping",
    ]
    required: bool = False
    most: int | None = None
    """The largest value a `positive_int` key takes (None: no cap)."""


RUN_CONFIG_FIELDS: tuple[RunConfigField, ...] = (
    RunConfigField(
        "system",
        "import path of the system, e.g. support_bot:answer or bot.py:answer",
        "import",
        required=True,
    ),
    RunConfigField("dataset", "path to a .jsonl, .json or .csv dataset", "path", required=True),
    RunConfigField(
        "evaluators",
        "list of evaluators, e.g. [ExactMatch: {criterion: exact_label, field: label}]",
        "evaluators",
        required=True,
    ),
    RunConfigField("split", "only the rows of this split", "string"),
    RunConfigField("policy", "path to a release policy (release.yaml)", "path"),
    RunConfigField("baseline", "the baseline run for paired rules (a result JSON file)", "path"),
    RunConfigField("concurrency", "how many cases run at once (positive integer)", "positive_int"),
    RunConfigField("timeout", "per-case timeout in seconds (positive number)", "positive_number"),
    RunConfigField(
        "evaluator_timeout",
        "time limit per verdict of an evaluator that runs your code, in seconds (positive "
        "number; default: timeout); a verdict over it is missing",
        "positive_number",
    ),
    RunConfigField(
        "confidence", "confidence level of the intervals, between 0 and 1", "confidence"
    ),
    RunConfigField(
        "isolation",
        "where the system runs: process (the default: processes of "
        "its own, measurements protected) or thread (in oloproof's process, for "
        "trusted code)",
        "isolation",
    ),
    RunConfigField(
        "sandbox",
        "auto (the default: the system's processes run in a sandbox where one can be "
        "made), required (refuse to run without one) or off (trusted code)",
        "sandbox",
    ),
    RunConfigField(
        "memory_limit_mb",
        "memory cap of each of the system's processes in MiB (positive integer, default 4096)",
        "positive_int",
    ),
    RunConfigField(
        "repeats",
        "how many times each case runs, each repeat an independent call of the system "
        f"(positive integer up to {MAX_REPEATS}, default 1; or auto: {AUTO_MOST} runs "
        "for the cases earlier runs found flaky or never ran, one for the stable ones; "
        "docs/repeats.md)",
        "repeats",
        most=MAX_REPEATS,
    ),
    RunConfigField(
        "judge_repeats",
        "how many times each model judge judges each output, the criterion's score being "
        f"the mean (positive integer up to {MAX_JUDGE_REPEATS}, default 1; docs/repeats.md)",
        "positive_int",
        most=MAX_JUDGE_REPEATS,
    ),
)
KEYS: dict[str, str] = {item.name: item.meaning for item in RUN_CONFIG_FIELDS}
REQUIRED = tuple(item.name for item in RUN_CONFIG_FIELDS if item.required)
MOST = {item.name: item.most for item in RUN_CONFIG_FIELDS if item.most is not None}


def sandbox_setting(value: Any) -> Any:
    """YAML reads a bare `off` as false (and `on` as true): both mean what they say."""
    return {False: "off", True: "auto"}.get(value, value) if isinstance(value, bool) else value


def key_problem(data: Mapping[str, Any]) -> tuple[str, str] | None:
    """(the key, what is wrong with it) for a config's first unknown, missing or empty key.

    An unknown key names the close match among the allowed ones (`evaluator:` is
    `evaluators:`) and lists them all; a required key written with no value (`system:`
    or `system: null`) says what the value is.
    """
    for key in data:
        if key not in KEYS:
            close = difflib.get_close_matches(str(key), KEYS, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            allowed = "\n".join(f"  {name}: {meaning}" for name, meaning in KEYS.items())
            return str(key), f"unknown key {key!r}{hint}; allowed keys:\n{allowed}"
    for key in REQUIRED:
        if key not in data:
            return key, f"missing key {key!r} ({KEYS[key]})"
        if data[key] is None:
            return key, f"{key!r} has no value; give the {KEYS[key]}"
    system = data["system"]
    module = system.partition(":")[0] if isinstance(system, str) else ""
    if (module.startswith(".") or "/" in module) and not module.endswith(".py"):
        # Python's import machinery raises a TypeError for these, which says nothing useful.
        return "system", (
            f"system {system!r}: {module!r} is neither a module name (no leading '.', no '/') "
            f"nor a file ending in .py; write a file path, e.g. "
            f"'{module.lstrip('.') if '/' not in module else module}.py:"
            f"{system.partition(':')[2] or 'name'}', or a module name, e.g. 'bot:answer'"
        )
    return None
