"""The oloproof engine: datasets, systems, evaluators, statistics and gates.

Everything here is internal to oloproof; the public surface for users is the
`oloproof` package, which re-exports what they need. The platform (`runs`,
`metrics`, `evalsite`) and the `oloproof` package import the engine through this
module and through its subpackages (`evaluators`, `stats`, `compare`, `gates`,
`models`) only, never through one of its plain modules: what is listed here is
the engine's contract with them (`tests/test_architecture.py` checks it).
"""

from oloproof_core._canonical import canonical_json, digest_text
from oloproof_core._version import __version__
from oloproof_core.aggregate import MetricEstimate, aggregate, estimate_metric
from oloproof_core.case import CaseError, CaseResult
from oloproof_core.context import Measurements, current_case
from oloproof_core.dataset import Dataset, Row, load_dataset
from oloproof_core.dspy_adapter import DspyMetric, dspy_examples, dspy_metric, dspy_system
from oloproof_core.errors import (
    ConfigError,
    ContractError,
    DatasetError,
    DeclarationError,
    OloproofError,
    UndeclaredReadError,
)
from oloproof_core.evaluation import (
    DatasetSource,
    RunPlan,
    conclude_run,
    plan_run,
    process_rows,
    run_evaluation,
)
from oloproof_core.execution import ProgressCallback
from oloproof_core.imports import load_object
from oloproof_core.judging import JudgingTally
from oloproof_core.measurement import observation, service_cost
from oloproof_core.result import Result
from oloproof_core.result_io import load_result, result_from_dict
from oloproof_core.reward import reward
from oloproof_core.run_config import (
    RUN_CONFIG_FIELDS,
    RunConfig,
    RunConfigField,
    check_run_config,
    load_run_config,
    run_config_from_mapping,
)
from oloproof_core.sequential import (
    decide_sequential,
    next_batch,
    run_until_decided,
    sequential_order,
)
from oloproof_core.store import CacheEntry, InMemoryStore, Store
from oloproof_core.system import System, system
from oloproof_core.verdict import Verdict

__all__ = [
    "RUN_CONFIG_FIELDS",
    "CacheEntry",
    "CaseError",
    "CaseResult",
    "ConfigError",
    "ContractError",
    "Dataset",
    "DatasetError",
    "DatasetSource",
    "DeclarationError",
    "DspyMetric",
    "InMemoryStore",
    "JudgingTally",
    "Measurements",
    "MetricEstimate",
    "OloproofError",
    "ProgressCallback",
    "Result",
    "Row",
    "RunConfig",
    "RunConfigField",
    "RunPlan",
    "Store",
    "System",
    "UndeclaredReadError",
    "Verdict",
    "__version__",
    "aggregate",
    "canonical_json",
    "check_run_config",
    "conclude_run",
    "current_case",
    "decide_sequential",
    "digest_text",
    "dspy_examples",
    "dspy_metric",
    "dspy_system",
    "estimate_metric",
    "load_dataset",
    "load_object",
    "load_result",
    "load_run_config",
    "next_batch",
    "observation",
    "plan_run",
    "process_rows",
    "result_from_dict",
    "reward",
    "run_config_from_mapping",
    "run_evaluation",
    "run_until_decided",
    "sequential_order",
    "service_cost",
    "system",
]
