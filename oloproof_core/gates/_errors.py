"""The error raised for a policy that cannot be read, validated or applied."""

from __future__ import annotations

from oloproof_core.errors import ConfigError


class PolicyError(ConfigError):
    """A release policy is invalid: names the file, the line, the key and what is allowed."""
