"""The submitting process's peak memory, by `bench.submit_memory`'s own measurement.

    .venv/bin/python -m bench.scale_all._submission --cases 100000 1000000 --out rows.json

Each size is `bench.submit_memory.__main__.measure`: a process of its own submits the
trivial dataset to a scratch database (here `oloproof_scale_all_submit`, dropped after)
and reports its resident memory before and its peak during `runs.services.run_submit`.
The rows go to `--out` only: that benchmark's own results file is left as it is.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench.submit_memory import __main__ as submit_memory
from bench.submit_memory.__main__ import DEFAULT_SERVER, measure

DATABASE = "oloproof_scale_all_submit"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.scale_all._submission")
    parser.add_argument("--cases", type=int, nargs="+", required=True)
    parser.add_argument("--postgres", default=DEFAULT_SERVER)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    # A name of its own: `bench.submit_memory` run meanwhile drops its scratch database
    # by force, which would end this measurement (and this one, that one's).
    submit_memory.DATABASE = DATABASE
    rows = []
    for cases in args.cases:
        rows.append(measure(args.postgres, cases))
        print(json.dumps(rows[-1]), flush=True)
    Path(args.out).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
