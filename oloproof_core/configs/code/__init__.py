"""A run config's code, read in its sandbox: the run's process holds declarations only.

A run config names its system and evaluators by reference (`bot.py:answer`,
`checks:known_label`, `metric.py`). Importing them runs their top-level code, so the
run's process (the command, a worker, the server checking a submission) never imports
them: a probe process does, in the sandbox the system will run in, and declares what it
found (`_in_probe`). The run's process keeps stand-ins (`DeclaredSystem`,
`DeclaredEvaluator`, a `MetricFile` made from its declaration) that carry those
declarations and the way each reaches its own processes. Only `isolation: thread`,
which runs the code in this process by the config's own choice (and which the
operator's `OLOPROOF_SANDBOX=required` refuses), imports it here.
"""

from __future__ import annotations

from oloproof_core.configs.code._declaring import (
    DeclaredCode,
    ProbeSettings,
    declare_config_code,
)
from oloproof_core.configs.code._loading import load_config_code
from oloproof_core.configs.code._stand_ins import DeclaredEvaluator, DeclaredSystem

__all__ = [
    "DeclaredCode",
    "DeclaredEvaluator",
    "DeclaredSystem",
    "ProbeSettings",
    "declare_config_code",
    "load_config_code",
]
