"""PPI++ intervals on the adaptive bench's releases, from the `ppi_python` package.

Runs in an environment of its own, never the project's (`ppi_python` is no
dependency of oloproof): `bench.labels --only adaptive` calls

    bench/.ppi-venv/bin/python -m bench.labels._ppi_reference --sims S --out FILE

which draws the same releases (`_adaptive_world`, NumPy alone) and writes, per cell
and number of labels, each release's PPI++ interval (`ppi_mean_ci`, the power-tuned
lambda estimated from the data, clipped to [0, 1], a normal interval), plus each
release's mean truth and judge mean, for the bench to check it saw the same runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from ppi_py import ppi_mean_ci  # type: ignore[import-not-found]

from . import _adaptive_world as w

COLUMNS = 50
"""Releases per call: `ppi_mean_ci` takes them as coordinates of one mean, each with
its own lambda (`lam_optim_mode="element"`), as the same call on each alone gives."""


def _intervals(found: w.Releases, n: int, alpha: float) -> tuple[w.Array, w.Array]:
    lows, highs = [], []
    for start in range(0, found.run_mean.size, COLUMNS):
        rows = slice(start, start + COLUMNS)
        low, high = ppi_mean_ci(
            found.drawn_truth[rows, :n].T,
            found.drawn_verdicts[rows, :n].T,
            found.verdicts[rows].T,
            alpha=alpha,
            lam_optim_mode="element",
        )
        lows.append(np.ravel(low))
        highs.append(np.ravel(high))
    return np.concatenate(lows), np.concatenate(highs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, required=True)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    saved: dict[str, w.Array] = {}
    for kind, judges in w.KINDS.items():
        for name in judges:
            parts: dict[str, list[w.Array]] = {}
            for found in w.releases(kind, name, args.sims):
                parts.setdefault("run_mean", []).append(found.run_mean)
                parts.setdefault("judge_mean", []).append(found.verdicts.mean(axis=1))
                for n in w.LABELS:
                    low, high = _intervals(found, n, args.alpha)
                    parts.setdefault(f"{n}.lower", []).append(low)
                    parts.setdefault(f"{n}.upper", []).append(high)
            for key, values in parts.items():
                saved[f"{kind}|{name}|{key}"] = np.concatenate(values)
            print(f"PPI++: {kind}, {name}", flush=True)
    np.savez(args.out, **saved)  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
