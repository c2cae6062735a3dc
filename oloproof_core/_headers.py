"""HTTP header names shared by the gateway and the processes that call it."""

CASE_HEADER = "X-Oloproof-Case"
"""Names the case a model call belongs to, when several cases share a process."""
