"""oloproof: evaluate AI systems against datasets and decide, with honest statistics,
whether a release may ship.

    from oloproof import evaluate, optimize, system, component, current_case
    from oloproof import winner_texts   # an optimization's winning texts
    from oloproof import annotate, annotations, export_cases   # a recorded run's cases
    from oloproof import keep_run, delete_run, list_runs   # name, tag, hide, delete runs
    from oloproof import label, import_labels, labels, calibration   # people's labels
    from oloproof.evaluators import ExactMatch, Contains, JsonSchema, Regex, RubricJudge, evaluator
"""

import importlib
from typing import TYPE_CHECKING, Any

from oloproof_core import __version__

if TYPE_CHECKING:
    from oloproof._cases import annotate, export_cases
    from oloproof._cases import annotations_read as annotations
    from oloproof._evaluate import evaluate
    from oloproof._keeping import delete_run, keep_run, list_runs
    from oloproof._labels import calibration, import_labels, label, labels
    from oloproof._optimization_export import winner_texts
    from oloproof._optimize import optimize
    from oloproof._plan import plan
    from oloproof._results import gate, load
    from oloproof._side_by_side import compare_side_by_side
    from oloproof._submit import Submission, continue_run, submit
    from oloproof._transcripts import transcript_difference
    from oloproof_core import (
        ConfigError,
        ContractError,
        DatasetError,
        DeclarationError,
        OloproofError,
        Result,
        System,
        UndeclaredReadError,
        component,
        current_case,
        system,
    )
    from oloproof_core.results.compare import compare_runs as compare

# Loaded on first use: a system's own process imports this package for `system` and
# `current_case` only, every command starts faster without the statistics (scipy), the
# optimizers and the platform until it needs them, and `oloproof run` starts its
# store's process before loading anything. A name of `__all__` not listed here is the
# engine's own (`oloproof_core`).
_LAZY = {
    "annotate": ("oloproof._cases", "annotate"),
    "annotations": ("oloproof._cases", "annotations_read"),
    "calibration": ("oloproof._labels", "calibration"),
    "continue_run": ("oloproof._submit", "continue_run"),
    "delete_run": ("oloproof._keeping", "delete_run"),
    "keep_run": ("oloproof._keeping", "keep_run"),
    "list_runs": ("oloproof._keeping", "list_runs"),
    "export_cases": ("oloproof._cases", "export_cases"),
    "evaluate": ("oloproof._evaluate", "evaluate"),
    "import_labels": ("oloproof._labels", "import_labels"),
    "label": ("oloproof._labels", "label"),
    "labels": ("oloproof._labels", "labels"),
    "optimize": ("oloproof._optimize", "optimize"),
    "winner_texts": ("oloproof._optimization_export", "winner_texts"),
    "plan": ("oloproof._plan", "plan"),
    "gate": ("oloproof._results", "gate"),
    "load": ("oloproof._results", "load"),
    "Submission": ("oloproof._submit", "Submission"),
    "submit": ("oloproof._submit", "submit"),
    "compare": ("oloproof_core.results.compare", "compare_runs"),
    "compare_side_by_side": ("oloproof._side_by_side", "compare_side_by_side"),
    "protections": ("oloproof_core.execution.doctor", "protections"),
    "transcript_difference": ("oloproof._transcripts", "transcript_difference"),
}

__all__ = [
    "ConfigError",
    "ContractError",
    "DatasetError",
    "DeclarationError",
    "OloproofError",
    "Result",
    "Submission",
    "System",
    "UndeclaredReadError",
    "__version__",
    "annotate",
    "annotations",
    "calibration",
    "compare",
    "compare_side_by_side",
    "component",
    "continue_run",
    "current_case",
    "delete_run",
    "evaluate",
    "export_cases",
    "gate",
    "import_labels",
    "keep_run",
    "label",
    "labels",
    "list_runs",
    "load",
    "optimize",
    "plan",
    "protections",
    "submit",
    "system",
    "transcript_difference",
    "winner_texts",
]


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name) or (("oloproof_core", name) if name in __all__ else None)
    if where is None:
        raise AttributeError(f"module 'oloproof' has no attribute {name!r}")
    module, attribute = where
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value
