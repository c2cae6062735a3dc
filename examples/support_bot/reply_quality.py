"""A metric file (the score(input, output, expected) contract) with two sub-scores.

`format`: the reply is one sentence of at most 120 characters ending with a full stop.
`politeness`: the reply thanks the customer or offers help.
"""


def score(input, output, expected=None):
    reply = str(output.get("reply", ""))
    form = 1.0 if reply and len(reply) <= 120 and reply.endswith(".") else 0.0
    polite = 1.0 if any(word in reply.lower() for word in ("thank", "happy to help")) else 0.0
    problems = []
    if not form:
        problems.append("end the reply with a full stop and keep it under 120 characters")
    if not polite:
        problems.append("thank the customer or offer help")
    feedback = "Good reply." if not problems else "Reply: " + "; ".join(problems) + "."
    return (form + polite) / 2, {
        "feedback": feedback,
        "scores": {"format": form, "politeness": polite},
    }
