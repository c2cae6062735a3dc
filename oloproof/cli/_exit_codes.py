"""Exit codes of the `oloproof` command, stable for CI scripts."""

OK = 0
"""The command succeeded; for a gated run, the gate passed (or there was no policy)."""
GATE_FAILED = 1
"""The gate failed: at least one rule's whole interval misses its threshold."""
GATE_INCONCLUSIVE = 2
"""The gate is inconclusive: no rule failed, but some interval straddles its threshold."""
BAD_INPUT = 3
"""The command could not run: a bad config, dataset, policy or declaration (message says which)."""
INTERNAL_ERROR = 4
"""An unexpected error inside oloproof (a traceback is printed)."""
NOTHING_OBSERVED = 5
"""A metric observed no case at all (every case missing): its first error is printed."""
PROTECTIONS_OFF = 6
"""`oloproof doctor`: some protection is off here, so runs are marked not protected."""

_BY_GATE_OUTCOME = {"pass": OK, "fail": GATE_FAILED, "inconclusive": GATE_INCONCLUSIVE}


def for_gate_outcome(outcome: str | None) -> int:
    return OK if outcome is None else _BY_GATE_OUTCOME[outcome]
