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
