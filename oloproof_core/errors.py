"""The errors oloproof raises on the user's behalf.

Each carries a message that says what is wrong and how to fix it; the CLI prints
the message alone, without a traceback.
"""

from __future__ import annotations


class OloproofError(Exception):
    """Base class for every error oloproof raises deliberately."""


class DatasetError(OloproofError):
    """A dataset could not be read: names the file, the line and the problem."""

    def __init__(self, source: str, line: int | None, problem: str) -> None:
        self.source = source
        self.line = line
        self.problem = problem
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {problem}")


class DeclarationError(OloproofError, TypeError):
    """A system or evaluator was declared in a form that cannot work."""


class UndeclaredReadError(OloproofError, AttributeError):
    """An evaluator read a part of the case that it did not declare in `reads`."""


class ConfigError(OloproofError):
    """A run configuration file is invalid: names the file, the key and what is allowed."""


class ContractError(OloproofError):
    """A value returned by user code breaks the contract it must follow."""


class SandboxFloorError(ConfigError):
    """A run asked for less protection than its machine's operator allows.

    `OLOPROOF_SANDBOX=required` in the environment of the process that runs the code is
    a floor: a run may not lower it with `sandbox: off` or `isolation: thread`. `key`
    names the setting that asked (`sandbox` or `isolation`), `value` what it asked for.
    """

    def __init__(self, key: str, value: str, what: str) -> None:
        self.key = key
        self.value = value
        super().__init__(
            f"{key}: {value} {what}, and this machine's operator set OLOPROOF_SANDBOX=required, "
            f"which a run cannot lower: remove `{key}: {value}` from the run's config (or "
            f"{key}={value!r} from evaluate()) and the system runs in a sandbox"
        )
