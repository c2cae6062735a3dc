"""oloproof: evaluate AI systems against datasets and decide, with honest statistics,
whether a release may ship.

    from oloproof import evaluate, system, current_case
    from oloproof.evaluators import ExactMatch, Contains, JsonSchema, Regex, RubricJudge, evaluator
"""

from oloproof._evaluate import evaluate
from oloproof._plan import plan
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
    current_case,
    system,
)
from oloproof_core.compare import compare_runs as compare

__all__ = [
    "ConfigError",
    "ContractError",
    "DatasetError",
    "DeclarationError",
    "OloproofError",
    "Result",
    "System",
    "UndeclaredReadError",
    "__version__",
    "compare",
    "current_case",
    "evaluate",
    "plan",
    "system",
]
