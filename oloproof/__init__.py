"""oloproof: evaluate AI systems against datasets and decide, with honest statistics,
whether a release may ship.

    from oloproof import evaluate, optimize, system, component, current_case
    from oloproof import annotate, annotations, export_cases   # a recorded run's cases
    from oloproof.evaluators import ExactMatch, Contains, JsonSchema, Regex, RubricJudge, evaluator
"""

from typing import TYPE_CHECKING, Any

from oloproof._cases import annotate, export_cases
from oloproof._cases import annotations_read as annotations
from oloproof._evaluate import evaluate
from oloproof._optimize import optimize
from oloproof._plan import plan
from oloproof._results import gate, load
from oloproof._submit import Submission, continue_run, submit
from oloproof_core import (
    ConfigError,
    ContractError,
    DatasetError,
    DeclarationError,
    OloproofError,
    Result,
    System,
    UndeclaredReadError,
    __version__,
    component,
    current_case,
    system,
)

if TYPE_CHECKING:
    from oloproof_core.compare import compare_runs as compare

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
    "compare",
    "component",
    "continue_run",
    "current_case",
    "evaluate",
    "export_cases",
    "gate",
    "load",
    "optimize",
    "plan",
    "submit",
    "system",
]


def __getattr__(name: str) -> Any:
    # `compare` brings in the statistics (scipy); a system's own process imports this
    # package for `system` and `current_case` and starts faster without them.
    if name == "compare":
        from oloproof_core.compare import compare_runs

        return compare_runs
    raise AttributeError(f"module 'oloproof' has no attribute {name!r}")
