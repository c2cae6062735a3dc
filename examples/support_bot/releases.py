"""Three releases of the support bot, as the demo records them.

Each routes a customer question to a label and writes a short reply:
- 1.0 knows refunds and parcels, but sends delivery-address questions to "other";
- 1.1 also knows deliveries, but its new backend times out on some chat tickets
  (those cases are missing, not wrong);
- 2.0 routes everything it was asked to and answers politely.
"""

import time

from oloproof import current_case, system
from oloproof.evaluators import evaluator

_REFUND = ("refund", "money back")
_SHIPPING = ("parcel", "package", "shipment")


def _route(question: str, *, knows_delivery: bool) -> str:
    text = question.lower()
    if any(word in text for word in _REFUND):
        return "refund"
    if any(word in text for word in _SHIPPING) or (knows_delivery and "delivery" in text):
        return "shipping"
    return "other"


def _order_number(question: str) -> int:
    digits = "".join(ch for ch in question if ch.isdigit())
    return int(digits) if digits else 0


def _think(question: str, base_ms: float) -> None:
    """Take a little time, as a real router would, so latencies are worth showing."""
    time.sleep((base_ms + (_order_number(question) % 9) * 3) / 1000)


@evaluator(criterion="known_route", reads=("output",))
def known_route(case):
    return case.output["label"] in {"refund", "shipping", "other"}


@system(name="support-bot", version="1.0")
def answer_v1(case):
    _think(case["question"], 12)
    label = _route(case["question"], knows_delivery=False)
    if case["channel"] == "email":
        return {"label": label, "reply": f"Thank you, your message went to our {label} team."}
    return {"label": label, "reply": f"Routed to {label}."}


@system(name="support-bot", version="1.1")
def answer_v1_1(case):
    _think(case["question"], 20)
    number = _order_number(case["question"])
    if case["channel"] == "chat" and number % 11 == 3:
        raise TimeoutError(f"routing backend did not answer within 2 s (ticket {number})")
    label = _route(case["question"], knows_delivery=True)
    current_case().attach("route", {"backend": "router-v2", "label": label})
    return {"label": label, "reply": f"Thanks, your {label} request is with the team."}


@system(name="support-bot", version="2.0")
def answer_v2(case):
    _think(case["question"], 8)
    label = _route(case["question"], knows_delivery=True)
    if "human" in case["question"].lower():
        # A deliberate product decision: people asking for a human go to support staff.
        label = "shipping" if case["channel"] == "chat" else label
    current_case().attach("route", {"backend": "router-v3", "label": label})
    return {
        "label": label,
        "reply": f"Thanks for reaching out, happy to help: your {label} request is with the team.",
    }
