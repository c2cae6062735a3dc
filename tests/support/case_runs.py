"""A recorded run whose cases differ by criterion: for the case table, annotations, exports.

Twelve cases of a support bot. `exact_label` (pass/fail) fails on every fourth case;
`reply_quality` (a score from 0 to 1, with feedback) is below 1 on every third, so
cases whose whole outcome is "passed" can still have failed on `reply_quality`. Case 5
raises (missing everywhere). Case ids are `ticket-00` … `ticket-11`.
"""

from __future__ import annotations

from typing import Any

from oloproof import evaluate, system
from oloproof.evaluators import ExactMatch, evaluator
from runs.models import Run
from runs.store import DjangoStore

N_CASES = 12


def ticket_rows(n: int = N_CASES) -> list[dict[str, Any]]:
    return [
        {
            "id": f"ticket-{i:02d}",
            "input": {"question": f"{'refund' if i % 2 == 0 else 'parcel'} question {i}"},
            "expected": {"label": "refund" if i % 2 == 0 else "shipping"},
        }
        for i in range(n)
    ]


@system(name="ticket-bot", version="1")
def ticket_bot(case: dict[str, Any]) -> dict[str, str]:
    number = int(case["question"].split()[-1])
    if number == 5:
        raise RuntimeError("backend timeout on ticket 5")
    label = "refund" if case["question"].startswith("refund") else "shipping"
    if number % 4 == 1:
        label = "other"
    return {"label": label, "reply": f"Reply number {number}"}


@evaluator(criterion="reply_quality", reads=("output",), value_type="score", score_range=(0, 1))
def reply_quality(case: Any) -> tuple[float, str]:
    number = int(case.output["reply"].split()[-1])
    if number % 3 == 0:
        return 0.25, f"Too curt for ticket {number}: greet the customer."
    return 1.0, "Polite and complete."


def ticket_run(n: int | None = None, bot: Any = ticket_bot) -> Run:
    """A recorded run of `bot` (the ticket bot by default) on the ticket rows (`n` of them)."""
    result = evaluate(
        bot,
        ticket_rows(N_CASES if n is None else n),
        [ExactMatch(criterion="exact_label", field="label"), reply_quality],
        store=DjangoStore(),
        concurrency=1,
        isolation="thread",
    )
    return Run.objects.get(pk=int(result.run_id))
