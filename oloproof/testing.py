"""Gates in test suites: `assert_gate` asserts a run's gate and prints its readout.

```python
from oloproof import evaluate
from oloproof.testing import assert_gate

def test_release_gate():
    result = evaluate(answer, "data/example.jsonl", [ExactMatch(criterion="exact_label",
                      field="label")], policy="release.yaml")
    assert_gate(result)
```

With the oloproof pytest plugin (installed with oloproof) the same function is the
`assert_gate` fixture, and the runs a test records are marked as the test's: they
show on the dashboard, but their gates wait for nobody's approval unless the test is
marked `@pytest.mark.oloproof(queue_approval=True)` (or wraps its run in
`queue_approvals()`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from oloproof._origin import origin_of_test
from oloproof._results import RunRef, gate
from oloproof_core import Result
from oloproof_core.gates import Gate

__all__ = ["assert_gate", "gate_readout", "queue_approvals"]


def _gate_of(subject: Any, policy: Any, baseline: RunRef | None) -> tuple[Any, Any]:
    """The gate to assert (a Gate, or a recorded gate's dict) and the run it belongs to."""
    if policy is not None:
        return gate(subject, policy, baseline=baseline), subject
    if isinstance(subject, Gate):
        return subject, None
    if isinstance(subject, Result):
        decided = subject.gate if subject.gate is not None else subject.extras.get("gate")
        if decided is None:
            raise AssertionError(
                "this run has no gate: evaluate it with policy=... or pass the policy "
                "to assert_gate(result, 'release.yaml')"
            )
        return decided, subject
    raise TypeError(
        "assert_gate needs a Result or a Gate (or a run and a policy), "
        f"got {type(subject).__name__}"
    )


def gate_readout(decided: Gate | Mapping[str, Any], run: Any = None) -> str:
    """The gate's verdict and every rule's outcome and reason, one per line."""
    if isinstance(decided, Gate):
        summary = str(decided)
        rules: Sequence[Any] = [rule.to_dict() for rule in decided.rules]
    else:
        summary = str(decided.get("summary") or f"gate {decided.get('outcome')}")
        rules = list(decided.get("rules") or [])
    lines = [summary]
    for rule in rules:
        lines.append(
            f"  {rule.get('outcome', '?'):<12} {rule.get('rule', '?')}: {rule.get('reason', '')}"
        )
    link = run.extras.get("run_url") if isinstance(run, Result) else None
    if link:
        lines.append(f"  run: {link}")
    return "\n".join(lines)


def assert_gate(
    subject: Any,
    policy: Any = None,
    *,
    baseline: RunRef | None = None,
    allow_inconclusive: bool = False,
) -> Gate | Mapping[str, Any]:
    """Assert that the gate passed; print its readout either way.

    `subject` is a Result (decided with a policy), a Gate, or — with `policy` — any
    run `oloproof.gate` accepts (a Result, a result file, a run id). An
    inconclusive gate fails the assertion unless `allow_inconclusive`. Returns the gate.
    """
    decided, run = _gate_of(subject, policy, baseline)
    outcome = decided.outcome if isinstance(decided, Gate) else decided.get("outcome")
    readout = gate_readout(decided, run)
    print(readout)
    allowed = {"pass", "inconclusive"} if allow_inconclusive else {"pass"}
    if outcome not in allowed:
        raise AssertionError(readout)
    return decided


@contextmanager
def queue_approvals(test: str = "") -> Iterator[None]:
    """Runs recorded inside the block wait for approval like any release, though from a test."""
    with origin_of_test(test=test, queue_approval=True):
        yield
