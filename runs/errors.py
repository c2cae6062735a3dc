"""Domain errors raised by services; the API maps each to a clear 4xx response."""

from __future__ import annotations


class DomainError(Exception):
    """A request the domain refuses; `status` is the HTTP status the API answers with."""

    status = 400


class InvalidRequestError(DomainError):
    status = 400


class NotPermittedError(DomainError):
    status = 403


class NotFoundError(DomainError):
    status = 404


class ConflictError(DomainError):
    status = 409


class ImmutableRecordError(ConflictError):
    """An audit record (an approval) cannot be changed or deleted once written."""


class OverrideNeededError(InvalidRequestError):
    """Approving a gate that did not pass without saying it is an override."""

    def __init__(self, message: str, *, gate_outcome: str) -> None:
        super().__init__(message)
        self.gate_outcome = gate_outcome


class OverrideReasonMissingError(InvalidRequestError):
    """An override with no reason given."""


class RunConfigInvalidError(InvalidRequestError):
    """A run config the workers could not run: every problem, with the key it concerns."""

    def __init__(self, problems: list[tuple[str | None, str]]) -> None:
        self.problems = problems
        super().__init__("\n".join(message for _, message in problems))
