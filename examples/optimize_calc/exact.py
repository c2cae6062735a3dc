def score(input, output, expected=None):
    want = expected["answer"]
    got = output.get("answer") if isinstance(output, dict) else output
    if str(got).strip() == want:
        return 1.0, {"feedback": "Correct.", "scores": {"format": 1.0}}
    return 0.0, {
        "feedback": f"Expected exactly {want!r}, got {got!r}. Reply with the number only.",
        "scores": {"format": 0.0},
    }
