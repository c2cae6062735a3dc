"""Labels and the judge: coverage of the combined interval; the review queue page's time.

Run: .venv/bin/python -m bench.labels [--sims 2000] [--only KEY ...] [--requests 200]
     [--cases 10000] [--repo PATH] [--adaptive-sims 10000] [--ppi-python PATH]
Keys: pass_fail, scores, weighted, missing (simulations, `_coverage.py`), adaptive (the
labelled interval against the labels alone and PPI++, `_adaptive.py`, at its own
--adaptive-sims) and review (the review queue page against a real server,
`_review.py`). Prints each table and
writes bench/results/labels.json; with --only it runs the named parts and replaces
just those in the file (the simulations at the file's --sims).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parents[1] / "results" / "labels.json"
SIMULATIONS = ("pass_fail", "scores", "weighted", "missing")


def _flat(row: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[prefix + key] = value
    return out


def print_table(title: str, rows: list[dict[str, Any]]) -> None:
    print(f"\n== {title}", flush=True)
    flat = [_flat(row) for row in rows]
    if not flat:
        return
    columns = list(flat[0])
    cells = [[str(row.get(column, "")) for column in columns] for row in flat]
    widths = [max(len(c), *(len(line[i]) for line in cells)) for i, c in enumerate(columns)]
    print("  ".join(c.ljust(width) for c, width in zip(columns, widths, strict=True)))
    for line in cells:
        print("  ".join(v.ljust(width) for v, width in zip(line, widths, strict=True)))


def _simulations(sims: int) -> dict[str, Callable[[], list[dict[str, Any]]]]:
    from . import _coverage

    return {
        "pass_fail": lambda: _coverage.pass_fail(sims),
        "scores": lambda: _coverage.scores(sims),
        "weighted": lambda: _coverage.weighted(sims),
        "missing": lambda: _coverage.missing(sims),
    }


def _recorded(args: argparse.Namespace, parser: argparse.ArgumentParser) -> dict[str, Any]:
    """What the file holds already when only some parts run (one --sims per file)."""
    if not (args.only and RESULTS.exists()):
        return {}
    recorded: dict[str, Any] = json.loads(RESULTS.read_text(encoding="utf-8"))
    if set(args.only) & set(SIMULATIONS) and recorded.get("sims") not in (None, args.sims):
        parser.error(f"{RESULTS.name} holds --sims {recorded.get('sims')}; pass the same")
    return recorded


def _run_part(key: str, args: argparse.Namespace, results: dict[str, Any]) -> None:
    begin = time.perf_counter()
    if key == "review":
        from ._review import review_page

        repo = (args.repo or Path(__file__).resolve().parents[2]).resolve()
        results["review"] = review_page(args.cases, args.requests, repo)
        print(f"\n== review  [{time.perf_counter() - begin:.1f} s]")
        print(json.dumps(results["review"], indent=2))
    elif key == "adaptive":
        from . import _adaptive

        python = args.ppi_python or _adaptive.PPI_PYTHON
        results["adaptive"] = _adaptive.adaptive(args.adaptive_sims, python)
        results["adaptive_sims"] = args.adaptive_sims
        print(f"\n== adaptive  [{time.perf_counter() - begin:.1f} s]")
        print(_adaptive.markdown(results["adaptive"]))
    else:
        results[key] = _simulations(args.sims)[key]()
        print_table(f"{key}  [{time.perf_counter() - begin:.1f} s]", results[key])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=2000, help="simulated runs per cell")
    parser.add_argument("--only", nargs="+", metavar="KEY", help="run these parts only")
    parser.add_argument("--requests", type=int, default=200, help="review page requests")
    parser.add_argument("--cases", type=int, default=10_000, help="cases in the reviewed run")
    parser.add_argument("--repo", type=Path, help="the checkout to record and serve (review)")
    parser.add_argument("--adaptive-sims", type=int, default=10_000, help="releases per cell")
    parser.add_argument("--ppi-python", type=Path, help="the Python with ppi_python (adaptive)")
    args = parser.parse_args()
    keys = [*SIMULATIONS, "adaptive", "review"]
    unknown = sorted(set(args.only or ()) - set(keys))
    if unknown:
        parser.error(f"no part {', '.join(unknown)}; the parts: {', '.join(keys)}")
    chosen = [key for key in keys if not args.only or key in args.only]
    results = _recorded(args, parser)
    started = time.perf_counter()
    if set(chosen) & {*SIMULATIONS, "adaptive"}:
        from . import _world

        checked = _world.cross_check()
        print(f"fast path = labels layer (draw_cases + labelled_estimate) on {checked} runs")
    if set(chosen) & set(SIMULATIONS):
        results["sims"] = args.sims
        results["cases"] = _world.CASES
        results["confidence"] = _world.CONFIDENCE
    for key in chosen:
        begin = time.perf_counter()
        _run_part(key, args, results)
        results.setdefault("seconds", {})[key] = round(time.perf_counter() - begin, 1)
    python = sys.version.split()[0]
    results["machine"] = f"{platform.node()}, {os.cpu_count()} cores, Python {python}"
    results["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"\n{time.perf_counter() - started:.0f} s in all; wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
