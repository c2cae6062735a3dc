"""How narrow any valid labelled interval for scores can be, against PPI++'s width.

Run: `.venv/bin/python -m bench.labels._score_floor` (after `bench.labels --only adaptive`,
whose PPI++ widths it reads from bench/results/labels.json).

The argument. Score labels and verdicts lie in [0, 1], so a judge may be off by most of
a point on a few cases. Take a release with the informative judge (corrections
``d = y - f`` spread about 0.1) and another with the same verdicts on every case, where
people give 0 to a share ``p`` of the cases the judge scored 0.9 or more (a judge that
gives full marks to a few worthless answers; about a tenth of its verdicts are that
high). That mean is lower by at least ``0.9 p``. With ``n`` labels, none of those cases
is drawn with chance ``(1 - p)^n``, and then everything the interval reads, the
verdicts and the labels, is as in the first release. A 95 % interval valid for every
judge must cover the lower mean in the second release too, so its lower end ``L`` must
satisfy, for every ``p``,

    (1 - p)^n * P(L > mean - 0.9 p) <= 0.05

(even spending the whole 5 % on this side). Taking the lower end as the estimate less a
half-width ``h``, the estimate normal with PPI++'s own standard error, the smallest
``h`` that meets this for every ``p`` is a floor on any valid interval's half-width for
this judge, whatever its construction; it is set against PPI++'s half-width.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "results" / "labels.json"
JUDGE = "informative (truth + N(0, 0.1))"
Z = 1.959964
DROP = 0.9  # the least a moved case lowers the mean by, over the share moved


def _normal_cdf(z: float) -> float:
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


def smallest_half_width(n: int, standard_error: float, alpha: float = 0.05) -> float:
    """The least ``h`` with ``(1 - p)^n * P(estimate - h > mean - DROP p) <= alpha``, all ``p``."""
    shares = [i / 200_000 for i in range(1, 40_000)]

    def worst(h: float) -> float:
        return max((1 - p) ** n * _normal_cdf((DROP * p - h) / standard_error) for p in shares)

    low, high = 0.0, 0.2
    for _ in range(40):
        middle = (low + high) / 2
        low, high = (low, middle) if worst(middle) <= alpha else (middle, high)
    return high


def main() -> None:
    rows = json.loads(RESULTS.read_text())["adaptive"]
    print("| labels | PPI++ width | floor on any valid width | floor / PPI++ | adaptive / PPI++ |")
    print("|---|---|---|---|---|")
    for row in rows:
        if row["kind"] != "score" or row["judge"] != JUDGE or row["labels"] < 100:
            continue
        width = row["ppi++"]["width"]
        floor = 2 * smallest_half_width(row["labels"], width / 2 / Z)
        print(
            f"| {row['labels']:,} | {width:.4f} | {floor:.4f} | {floor / width:.2f} "
            f"| {row['adaptive / ppi++']:.2f} |"
        )


if __name__ == "__main__":
    main()
