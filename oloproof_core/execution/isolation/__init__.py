"""Running a system in processes of its own, so it cannot touch what the engine measures.

The parent starts a pool of child processes, warms them (imports the system and calls
its warm-up hook outside any timing), sends them cases one at a time and times every
call itself. A child that crashes, exits, hangs past the timeout or runs out of
memory loses only its own cases and is replaced. See docs/isolation.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof_core._util.names_on_first_use import names_on_first_use

if TYPE_CHECKING:
    from oloproof_core.execution.isolation._env import ChildEnv, child_environment, is_secret_name
    from oloproof_core.execution.isolation._errors import IsolationError
    from oloproof_core.execution.isolation._hooks import CaseHook
    from oloproof_core.execution.isolation._keeper import MAX_WARMUP_FAILURES, WARMUP_TIMEOUT_S
    from oloproof_core.execution.isolation._kept_paths import keep_from_systems
    from oloproof_core.execution.isolation._metered import (
        GATEWAY_URL_VARIABLE,
        MeteredPool,
        metered_call,
    )
    from oloproof_core.execution.isolation._pool import ProcessPool
    from oloproof_core.execution.isolation._reference import SystemReference, reference_for
    from oloproof_core.execution.isolation._sandbox_choice import (
        SANDBOX_MODES,
        SandboxSupport,
        UnprotectedRunWarning,
        check_sandbox_support_early,
        sandbox_mode,
        sandbox_support,
    )
    from oloproof_core.execution.isolation._sizing import DEFAULT_MEMORY_LIMIT_MB, pool_shape

# Loaded on first use: a system's own process imports `_child` from this package and
# needs none of the parent's side (the pool, the metering, asyncio).
_EXPORTS: dict[str, str] = {
    "ChildEnv": "._env",
    "child_environment": "._env",
    "is_secret_name": "._env",
    "IsolationError": "._errors",
    "CaseHook": "._hooks",
    "GATEWAY_URL_VARIABLE": "._metered",
    "MeteredPool": "._metered",
    "metered_call": "._metered",
    "MAX_WARMUP_FAILURES": "._keeper",
    "WARMUP_TIMEOUT_S": "._keeper",
    "ProcessPool": "._pool",
    "SystemReference": "._reference",
    "reference_for": "._reference",
    "SANDBOX_MODES": "._sandbox_choice",
    "SandboxSupport": "._sandbox_choice",
    "UnprotectedRunWarning": "._sandbox_choice",
    "check_sandbox_support_early": "._sandbox_choice",
    "keep_from_systems": "._kept_paths",
    "sandbox_mode": "._sandbox_choice",
    "sandbox_support": "._sandbox_choice",
    "DEFAULT_MEMORY_LIMIT_MB": "._sizing",
    "pool_shape": "._sizing",
}

ISOLATION_MODES = ("process", "thread")
"""`process`: the default, measurements protected; `thread`: in this process, for trusted code."""

__all__ = [
    "DEFAULT_MEMORY_LIMIT_MB",
    "GATEWAY_URL_VARIABLE",
    "ISOLATION_MODES",
    "MAX_WARMUP_FAILURES",
    "SANDBOX_MODES",
    "WARMUP_TIMEOUT_S",
    "CaseHook",
    "ChildEnv",
    "IsolationError",
    "MeteredPool",
    "ProcessPool",
    "SandboxSupport",
    "SystemReference",
    "UnprotectedRunWarning",
    "check_sandbox_support_early",
    "child_environment",
    "is_secret_name",
    "keep_from_systems",
    "metered_call",
    "pool_shape",
    "reference_for",
    "sandbox_mode",
    "sandbox_support",
]


__getattr__ = names_on_first_use(__name__, _EXPORTS, globals())
