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

from typing import TYPE_CHECKING

from oloproof_core._util.names_on_first_use import names_on_first_use

if TYPE_CHECKING:
    from oloproof_core.configs.code._declaring import (
        DeclaredCode,
        ProbeSettings,
        declare_config_code,
    )
    from oloproof_core.configs.code._loading import load_config_code
    from oloproof_core.configs.code._stand_ins import DeclaredEvaluator, DeclaredSystem

# Loaded on first use: the probe's own process runs `_in_probe` from this package and
# needs none of the run's side (starting the probe, the sandbox, the stand-ins).
_EXPORTS: dict[str, str] = {
    "DeclaredCode": "._declaring",
    "ProbeSettings": "._declaring",
    "declare_config_code": "._declaring",
    "load_config_code": "._loading",
    "DeclaredEvaluator": "._stand_ins",
    "DeclaredSystem": "._stand_ins",
}

__all__ = [
    "DeclaredCode",
    "DeclaredEvaluator",
    "DeclaredSystem",
    "ProbeSettings",
    "declare_config_code",
    "load_config_code",
]

__getattr__ = names_on_first_use(__name__, _EXPORTS, globals())
