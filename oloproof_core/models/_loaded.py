"""Whether this process has loaded a model client: the question a system's process and
an evaluator's process answer their parent, which then starts the metering gateway's
server for them (and only then)."""

from __future__ import annotations

import sys

MODEL_CLIENT_MODULES = ("openai", "oloproof.models", "skynet")
"""Modules whose presence says the code calls models. Not the engine's own
`oloproof_core.models`: every module that imports the evaluators loads it, and
preparing the client (and the gateway's server, in the run's process) would cost a
model-free run time it never uses."""


def loads_models() -> bool:
    """Whether the code this process imported loaded a model client."""
    return any(name in sys.modules for name in MODEL_CLIENT_MODULES)
