"""The oloproof engine: datasets, systems, evaluators, statistics and gates.

Everything here is internal to oloproof; the public surface for users is the
`oloproof` package, which re-exports what they need. The platform (`runs`,
`metrics`, `evalsite`) and the `oloproof` package import the engine through this
module and through its subpackages (`evaluators`, `stats`, `compare`, `gates`,
`models`, `gateway`, `optimize`, `isolation`) only, never through one of its plain
modules: what is listed here is the engine's contract with them
(`tests/test_architecture.py` checks it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof_core._util.names_on_first_use import names_on_first_use
from oloproof_core._util.version import __version__

# The surface, name by name, imported on first use: a process that needs only `system`
# or `current_case` (a system's own child process) never loads the statistics (scipy)
# or the evaluators, and a command starts its store's process before loading anything.
# No name here is also the name of a module of this package: importing that module
# would put it in the name's place.
_EXPORTS: dict[str, str] = {
    "CacheEntry": "oloproof_core.results.store",
    "canonical_json": "oloproof_core._util.canonical",
    "CaseColumns": "oloproof_core.results.columns.case_columns",
    "CaseColumnsBuilder": "oloproof_core.results.columns.builder",
    "ReadingOrderBuilder": "oloproof_core.results.columns.builder",
    "SpilledColumns": "oloproof_core.results.columns.spilled",
    "DeferredIds": "oloproof_core.results.columns.case_columns",
    "CaseError": "oloproof_core.cases.case",
    "CaseResult": "oloproof_core.cases.case",
    "check_run_config": "oloproof_core.configs.run_config",
    "component": "oloproof_core.execution.components",
    "conclude_run": "oloproof_core.evaluation.conclusion",
    "ConfigError": "oloproof_core.errors",
    "ContractError": "oloproof_core.errors",
    "current_case": "oloproof_core.cases.context",
    "Dataset": "oloproof_core.datasets.rows",
    "DatasetFile": "oloproof_core.datasets.file",
    "check_dataset_file": "oloproof_core.datasets.file",
    "DatasetError": "oloproof_core.errors",
    "DatasetSource": "oloproof_core.evaluation.plan",
    "decide_sequential": "oloproof_core.evaluation.sequential",
    "DeclarationError": "oloproof_core.errors",
    "digest_text": "oloproof_core._util.canonical",
    "keep_from_systems": "oloproof_core.execution.isolation",
    "check_sandbox_support_early": "oloproof_core.execution.isolation",
    "UnprotectedRunWarning": "oloproof_core.execution.isolation",
    "protections": "oloproof_core.execution.doctor",
    "Protections": "oloproof_core.execution.doctor",
    "dspy_examples": "oloproof_core.optimize._dspy_adapter",
    "dspy_metric": "oloproof_core.optimize._dspy_adapter",
    "dspy_system": "oloproof_core.optimize._dspy_adapter",
    "DspyMetric": "oloproof_core.optimize._dspy_adapter",
    "end_process": "oloproof_core._util.process_exit",
    "estimate_metric": "oloproof_core.evaluation.aggregate",
    "fewer_collections": "oloproof_core._util.gc_tuning",
    "InMemoryStore": "oloproof_core.results.store",
    "json_encoder": "oloproof_core._util.json_text",
    "JudgingTally": "oloproof_core.judging.judge",
    "load_dataset": "oloproof_core.datasets.dataset",
    "load_object": "oloproof_core._util.imports",
    "load_result": "oloproof_core.results.reading",
    "load_run_config": "oloproof_core.configs.run_config",
    "names_on_first_use": "oloproof_core._util.names_on_first_use",
    "Measurements": "oloproof_core.cases.observations",
    "MetricEstimate": "oloproof_core.results.estimate",
    "namespace_for": "oloproof_core._util.imports",
    "next_batch": "oloproof_core.evaluation.sequential",
    "observation": "oloproof_core.cases.measurement",
    "OloproofError": "oloproof_core.errors",
    "SandboxFloorError": "oloproof_core.errors",
    "path_within": "oloproof_core._util.imports",
    "plan_run": "oloproof_core.evaluation.plan",
    "process_rows": "oloproof_core.evaluation.run",
    "ProgressCallback": "oloproof_core.execution.running",
    "Result": "oloproof_core.results.result",
    "result_from_dict": "oloproof_core.results.reading",
    "Row": "oloproof_core.datasets.rows",
    "RUN_CONFIG_FIELDS": "oloproof_core.configs.fields",
    "run_config_from_mapping": "oloproof_core.configs.run_config",
    "run_config_paths": "oloproof_core.configs.run_config",
    "run_config_paths_check": "oloproof_core.configs.run_config",
    "run_config_read": "oloproof_core.configs.run_config",
    "run_config_check": "oloproof_core.configs.checks",
    "CheckedRunConfig": "oloproof_core.configs.checks",
    "ConfigProblem": "oloproof_core.configs.checks",
    "ConfigProblemsError": "oloproof_core.configs.checks",
    "run_evaluation": "oloproof_core.evaluation.run",
    "RecordsAsItGoes": "oloproof_core.results.store",
    "RunOpening": "oloproof_core.results.store",
    "run_until_decided": "oloproof_core.evaluation.sequential",
    "RunConfig": "oloproof_core.configs.run_config",
    "RunConfigField": "oloproof_core.configs.fields",
    "RunPlan": "oloproof_core.evaluation.plan",
    "case_id_of": "oloproof_core.evaluation.repeats",
    "check_judge_repeats": "oloproof_core.evaluation.repeats",
    "check_repeats": "oloproof_core.evaluation.repeats",
    "repeat_id": "oloproof_core.evaluation.repeats",
    "repeat_of": "oloproof_core.evaluation.repeats",
    "repeated_dataset": "oloproof_core.evaluation.repeats",
    "different_cases": "oloproof_core.evaluation.repeats",
    "repeats_in": "oloproof_core.evaluation.repeats",
    "tries_vary": "oloproof_core.evaluation.repeats",
    "AUTO": "oloproof_core.evaluation.repeats",
    "is_auto": "oloproof_core.evaluation.repeats",
    "Earlier": "oloproof_core.evaluation.auto_repeats",
    "EVIDENCE_RUNS": "oloproof_core.evaluation.auto_repeats",
    "earlier_from": "oloproof_core.evaluation.auto_repeats",
    "earlier_of": "oloproof_core.evaluation.auto_repeats",
    "column_outcomes": "oloproof_core.evaluation.auto_repeats",
    "allocate": "oloproof_core.evaluation.auto_repeats",
    "AUTO_MOST": "oloproof_core.evaluation.auto_repeats",
    "allocated_dataset_file": "oloproof_core.evaluation.auto_repeats",
    "tried_dataset": "oloproof_core.evaluation.auto_repeats",
    "tries_of": "oloproof_core.evaluation.auto_repeats",
    "is_file_source": "oloproof_core.evaluation.auto_repeats",
    "with_repeat_index": "oloproof_core.evaluation.repeats",
    "start_serving_process": "oloproof_core._util.serving_process",
    "reward": "oloproof_core.cases.rewards",
    "System": "oloproof_core.execution.systems",
    "system": "oloproof_core.execution.systems",
    "wait_for_exit": "oloproof_core._util.serving_process",
    "sequential_order": "oloproof_core.evaluation.sequential",
    "service_cost": "oloproof_core.cases.measurement",
    "storable_text": "oloproof_core._util.limits",
    "read_text": "oloproof_core._util.text_files",
    "text_written": "oloproof_core._util.text_files",
    "config_files_check": "oloproof_core.configs.files",
    "did_you_mean": "oloproof_core.datasets.close_ids",
    "CLOSE_IDS_COMPARED": "oloproof_core.datasets.close_ids",
    "MAX_RUN_CASES": "oloproof_core._util.limits",
    "Store": "oloproof_core.results.store",
    "UndeclaredReadError": "oloproof_core.errors",
    "value_problem": "oloproof_core._util.limits",
    "Transcript": "oloproof_core.cases.transcript",
    "Verdict": "oloproof_core.cases.verdict",
    "yaml_load": "oloproof_core._util.safe_yaml",
}

if TYPE_CHECKING:
    from oloproof_core._util.canonical import canonical_json as canonical_json
    from oloproof_core._util.canonical import digest_text as digest_text
    from oloproof_core._util.gc_tuning import fewer_collections as fewer_collections
    from oloproof_core._util.imports import load_object as load_object
    from oloproof_core._util.imports import namespace_for as namespace_for
    from oloproof_core._util.imports import path_within as path_within
    from oloproof_core._util.json_text import json_encoder as json_encoder
    from oloproof_core._util.limits import MAX_RUN_CASES as MAX_RUN_CASES
    from oloproof_core._util.limits import storable_text as storable_text
    from oloproof_core._util.limits import value_problem as value_problem
    from oloproof_core._util.names_on_first_use import names_on_first_use as names_on_first_use
    from oloproof_core._util.process_exit import end_process as end_process
    from oloproof_core._util.safe_yaml import yaml_load as yaml_load
    from oloproof_core._util.serving_process import start_serving_process as start_serving_process
    from oloproof_core._util.serving_process import wait_for_exit as wait_for_exit
    from oloproof_core._util.text_files import read_text as read_text
    from oloproof_core._util.text_files import text_written as text_written
    from oloproof_core.cases.case import CaseError as CaseError
    from oloproof_core.cases.case import CaseResult as CaseResult
    from oloproof_core.cases.context import current_case as current_case
    from oloproof_core.cases.measurement import observation as observation
    from oloproof_core.cases.measurement import service_cost as service_cost
    from oloproof_core.cases.observations import Measurements as Measurements
    from oloproof_core.cases.rewards import reward as reward
    from oloproof_core.cases.transcript import Transcript as Transcript
    from oloproof_core.cases.verdict import Verdict as Verdict
    from oloproof_core.configs.checks import CheckedRunConfig as CheckedRunConfig
    from oloproof_core.configs.checks import ConfigProblem as ConfigProblem
    from oloproof_core.configs.checks import ConfigProblemsError as ConfigProblemsError
    from oloproof_core.configs.checks import run_config_check as run_config_check
    from oloproof_core.configs.fields import RUN_CONFIG_FIELDS as RUN_CONFIG_FIELDS
    from oloproof_core.configs.fields import RunConfigField as RunConfigField
    from oloproof_core.configs.files import config_files_check as config_files_check
    from oloproof_core.configs.run_config import RunConfig as RunConfig
    from oloproof_core.configs.run_config import check_run_config as check_run_config
    from oloproof_core.configs.run_config import load_run_config as load_run_config
    from oloproof_core.configs.run_config import run_config_from_mapping as run_config_from_mapping
    from oloproof_core.configs.run_config import run_config_paths as run_config_paths
    from oloproof_core.configs.run_config import run_config_paths_check as run_config_paths_check
    from oloproof_core.configs.run_config import run_config_read as run_config_read
    from oloproof_core.datasets.close_ids import CLOSE_IDS_COMPARED as CLOSE_IDS_COMPARED
    from oloproof_core.datasets.close_ids import did_you_mean as did_you_mean
    from oloproof_core.datasets.dataset import load_dataset as load_dataset
    from oloproof_core.datasets.file import DatasetFile as DatasetFile
    from oloproof_core.datasets.file import check_dataset_file as check_dataset_file
    from oloproof_core.datasets.rows import Dataset as Dataset
    from oloproof_core.datasets.rows import Row as Row
    from oloproof_core.errors import ConfigError as ConfigError
    from oloproof_core.errors import ContractError as ContractError
    from oloproof_core.errors import DatasetError as DatasetError
    from oloproof_core.errors import DeclarationError as DeclarationError
    from oloproof_core.errors import OloproofError as OloproofError
    from oloproof_core.errors import SandboxFloorError as SandboxFloorError
    from oloproof_core.errors import UndeclaredReadError as UndeclaredReadError
    from oloproof_core.evaluation.aggregate import estimate_metric as estimate_metric
    from oloproof_core.evaluation.auto_repeats import AUTO_MOST as AUTO_MOST
    from oloproof_core.evaluation.auto_repeats import EVIDENCE_RUNS as EVIDENCE_RUNS
    from oloproof_core.evaluation.auto_repeats import Earlier as Earlier
    from oloproof_core.evaluation.auto_repeats import allocate as allocate
    from oloproof_core.evaluation.auto_repeats import (
        allocated_dataset_file as allocated_dataset_file,
    )
    from oloproof_core.evaluation.auto_repeats import column_outcomes as column_outcomes
    from oloproof_core.evaluation.auto_repeats import earlier_from as earlier_from
    from oloproof_core.evaluation.auto_repeats import earlier_of as earlier_of
    from oloproof_core.evaluation.auto_repeats import is_file_source as is_file_source
    from oloproof_core.evaluation.auto_repeats import tried_dataset as tried_dataset
    from oloproof_core.evaluation.auto_repeats import tries_of as tries_of
    from oloproof_core.evaluation.conclusion import conclude_run as conclude_run
    from oloproof_core.evaluation.plan import DatasetSource as DatasetSource
    from oloproof_core.evaluation.plan import RunPlan as RunPlan
    from oloproof_core.evaluation.plan import plan_run as plan_run
    from oloproof_core.evaluation.repeats import AUTO as AUTO
    from oloproof_core.evaluation.repeats import case_id_of as case_id_of
    from oloproof_core.evaluation.repeats import check_judge_repeats as check_judge_repeats
    from oloproof_core.evaluation.repeats import check_repeats as check_repeats
    from oloproof_core.evaluation.repeats import different_cases as different_cases
    from oloproof_core.evaluation.repeats import is_auto as is_auto
    from oloproof_core.evaluation.repeats import repeat_id as repeat_id
    from oloproof_core.evaluation.repeats import repeat_of as repeat_of
    from oloproof_core.evaluation.repeats import repeated_dataset as repeated_dataset
    from oloproof_core.evaluation.repeats import repeats_in as repeats_in
    from oloproof_core.evaluation.repeats import tries_vary as tries_vary
    from oloproof_core.evaluation.repeats import with_repeat_index as with_repeat_index
    from oloproof_core.evaluation.run import process_rows as process_rows
    from oloproof_core.evaluation.run import run_evaluation as run_evaluation
    from oloproof_core.evaluation.sequential import decide_sequential as decide_sequential
    from oloproof_core.evaluation.sequential import next_batch as next_batch
    from oloproof_core.evaluation.sequential import run_until_decided as run_until_decided
    from oloproof_core.evaluation.sequential import sequential_order as sequential_order
    from oloproof_core.execution.components import component as component
    from oloproof_core.execution.doctor import Protections as Protections
    from oloproof_core.execution.doctor import protections as protections
    from oloproof_core.execution.isolation import UnprotectedRunWarning as UnprotectedRunWarning
    from oloproof_core.execution.isolation import (
        check_sandbox_support_early as check_sandbox_support_early,
    )
    from oloproof_core.execution.isolation import keep_from_systems as keep_from_systems
    from oloproof_core.execution.running import ProgressCallback as ProgressCallback
    from oloproof_core.execution.systems import System as System
    from oloproof_core.execution.systems import system as system
    from oloproof_core.judging.judge import JudgingTally as JudgingTally
    from oloproof_core.optimize._dspy_adapter import DspyMetric as DspyMetric
    from oloproof_core.optimize._dspy_adapter import dspy_examples as dspy_examples
    from oloproof_core.optimize._dspy_adapter import dspy_metric as dspy_metric
    from oloproof_core.optimize._dspy_adapter import dspy_system as dspy_system
    from oloproof_core.results.columns.builder import CaseColumnsBuilder as CaseColumnsBuilder
    from oloproof_core.results.columns.builder import ReadingOrderBuilder as ReadingOrderBuilder
    from oloproof_core.results.columns.case_columns import CaseColumns as CaseColumns
    from oloproof_core.results.columns.case_columns import DeferredIds as DeferredIds
    from oloproof_core.results.columns.spilled import SpilledColumns as SpilledColumns
    from oloproof_core.results.estimate import MetricEstimate as MetricEstimate
    from oloproof_core.results.reading import load_result as load_result
    from oloproof_core.results.reading import result_from_dict as result_from_dict
    from oloproof_core.results.result import Result as Result
    from oloproof_core.results.store import CacheEntry as CacheEntry
    from oloproof_core.results.store import InMemoryStore as InMemoryStore
    from oloproof_core.results.store import RecordsAsItGoes as RecordsAsItGoes
    from oloproof_core.results.store import RunOpening as RunOpening
    from oloproof_core.results.store import Store as Store

__all__ = [
    "AUTO",
    "AUTO_MOST",
    "CLOSE_IDS_COMPARED",
    "EVIDENCE_RUNS",
    "MAX_RUN_CASES",
    "RUN_CONFIG_FIELDS",
    "CacheEntry",
    "CaseColumns",
    "CaseColumnsBuilder",
    "CaseError",
    "CaseResult",
    "CheckedRunConfig",
    "ConfigError",
    "ConfigProblem",
    "ConfigProblemsError",
    "ContractError",
    "Dataset",
    "DatasetError",
    "DatasetFile",
    "DatasetSource",
    "DeclarationError",
    "DeferredIds",
    "DspyMetric",
    "Earlier",
    "InMemoryStore",
    "JudgingTally",
    "Measurements",
    "MetricEstimate",
    "OloproofError",
    "ProgressCallback",
    "Protections",
    "ReadingOrderBuilder",
    "RecordsAsItGoes",
    "Result",
    "Row",
    "RunConfig",
    "RunConfigField",
    "RunOpening",
    "RunPlan",
    "SandboxFloorError",
    "SpilledColumns",
    "Store",
    "System",
    "Transcript",
    "UndeclaredReadError",
    "UnprotectedRunWarning",
    "Verdict",
    "__version__",
    "allocate",
    "allocated_dataset_file",
    "canonical_json",
    "case_id_of",
    "check_dataset_file",
    "check_judge_repeats",
    "check_repeats",
    "check_run_config",
    "check_sandbox_support_early",
    "column_outcomes",
    "component",
    "conclude_run",
    "config_files_check",
    "current_case",
    "decide_sequential",
    "did_you_mean",
    "different_cases",
    "digest_text",
    "dspy_examples",
    "dspy_metric",
    "dspy_system",
    "earlier_from",
    "earlier_of",
    "end_process",
    "estimate_metric",
    "fewer_collections",
    "is_auto",
    "is_file_source",
    "json_encoder",
    "keep_from_systems",
    "load_dataset",
    "load_object",
    "load_result",
    "load_run_config",
    "names_on_first_use",
    "namespace_for",
    "next_batch",
    "observation",
    "path_within",
    "plan_run",
    "process_rows",
    "protections",
    "read_text",
    "repeat_id",
    "repeat_of",
    "repeated_dataset",
    "repeats_in",
    "result_from_dict",
    "reward",
    "run_config_check",
    "run_config_from_mapping",
    "run_config_paths",
    "run_config_paths_check",
    "run_config_read",
    "run_evaluation",
    "run_until_decided",
    "sequential_order",
    "service_cost",
    "start_serving_process",
    "storable_text",
    "system",
    "text_written",
    "tried_dataset",
    "tries_of",
    "tries_vary",
    "value_problem",
    "wait_for_exit",
    "with_repeat_index",
    "yaml_load",
]


__getattr__ = names_on_first_use(__name__, _EXPORTS, globals())
