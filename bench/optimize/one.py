"""One side of `bench.optimize` in a process of its own (`--whole-process`).

    python -m bench.optimize.one oloproof|gepa FOLDER BUDGET BASE_URL

Prints the side's figures as one line of JSON. Its time to the target is also counted
from the moment the bench started this process (`since_launch`): the interpreter's
start and every import are then inside the figure, for both sides alike, as they are
in the time a user waits.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bench.optimize.__main__ import through_gepa, through_oloproof


def main(argv: list[str]) -> None:
    side, folder, budget, base_url = argv[1], Path(argv[2]), int(argv[3]), argv[4]
    if side == "oloproof":
        figures = through_oloproof(folder, budget)
    else:
        figures = through_gepa(budget, base_url, folder)
    print(json.dumps(figures, default=str))


if __name__ == "__main__":
    main(sys.argv)
