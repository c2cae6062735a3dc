"""The labelled interval that adapts to its judge, against the labels alone and PPI++.

Per simulated release (`_adaptive_world`) and number of labels, four 95 % intervals
for the release's mean truth over its N cases:

- adaptive: the engine's labelled interval (`_judge_or_labels.labelled_bounds`, what
  `labelled_estimate` computes; checked against `prediction_powered_interval` on the
  first rows of every chunk, which `_world.cross_check` checks against the labels layer);
- betting and exact: what the engine gave pass/fail labels before the judge's two
  verdicts split them (from 100 labels; below, and for scores, the adaptive interval):
  the betting interval and Clopper–Pearson's common part, the error rate split;
- previous: the interval those replaced, the betting interval on ``y - f`` (lambda = 1)
  with the same bets (`tuning_for`), read in draw order;
- labels only: Clopper–Pearson (pass/fail) or the betting interval (scores) on the
  labelled draws alone, exact for the release's mean (uniform draws are i.i.d.);
- PPI++: `ppi_python`'s `ppi_mean_ci`, power-tuned, a normal interval, computed in an
  environment of its own (`_ppi_reference`) on the same releases;
- ideal lean: the betting member alone at the full error rate, with the lean PPI++
  would take with every case labelled known before any label: what betting costs
  against PPI++ when nothing has to be learnt and no error rate is split.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from oloproof_core.labels._labelled import tuning_for
from oloproof_core.stats import bounded_mean_bounds, clopper_pearson, prediction_powered_interval
from oloproof_core.stats._judge_or_labels import BY_VERDICT_FROM, _judge_and_exact, labelled_bounds
from oloproof_core.stats._power_tuned import Rectified, power_tuned_bounds

from . import _adaptive_world as w

CONFIDENCE = 0.95
METHODS = ("adaptive", "betting_and_exact", "previous", "labels_only", "ppi++", "ideal_lean")
PPI_PYTHON = Path(__file__).resolve().parents[1] / ".ppi-venv" / "bin" / "python"
Bounds = tuple[w.Array, w.Array]


def _draws(found: w.Releases, n: int) -> Rectified:
    ys, fs, verdicts = found.drawn_truth[:, :n], found.drawn_verdicts[:, :n], found.verdicts
    return Rectified(
        ys,
        fs,
        verdicts.mean(axis=1),
        verdicts.max(axis=1),
        verdicts.min(axis=1),
        1.0,
        two_valued=((verdicts == 0.0) | (verdicts == 1.0)).all(axis=1),
    )


def _adaptive(kind: str, found: w.Releases, n: int) -> Bounds:
    lower, upper, _ = labelled_bounds(
        _draws(found, n), 1.0 - CONFIDENCE, tuning_for(kind), exact_labels=kind == "pass_fail"
    )
    _check_entry_point(kind, found, n, (lower, upper))
    return lower, upper


def _check_entry_point(kind: str, found: w.Releases, n: int, bounds: Bounds) -> None:
    """The vectorised path gives the engine's single-release interval on the first rows."""
    cases = found.verdicts.shape[1]
    for row in range(min(2, found.run_mean.size)):
        single = prediction_powered_interval(
            found.verdicts[row],
            np.full(cases, 1.0 / cases),
            found.index[row, :n],
            found.drawn_truth[row, :n],
            0,
            CONFIDENCE,
            tuning=tuning_for(kind),
            exact_labels=kind == "pass_fail",
        ).interval
        apart = max(abs(single.lower - bounds[0][row]), abs(single.upper - bounds[1][row]))
        if apart > 1e-12:
            raise AssertionError(f"{kind} n={n} row {row}: {single} against the fast path")


def _betting_and_exact(kind: str, found: w.Releases, n: int, adaptive: Bounds) -> Bounds:
    """What the engine gave pass/fail labels before the judge's two verdicts split them
    (the betting interval and Clopper–Pearson's common part); scores are unchanged."""
    if kind != "pass_fail" or n < BY_VERDICT_FROM:
        return adaptive
    lower, upper, _ = _judge_and_exact(_draws(found, n), 1.0 - CONFIDENCE, tuning_for(kind))
    return lower, upper


def _ideal_lean(kind: str, found: w.Releases, n: int) -> Bounds:
    ys, fs, verdicts = found.drawn_truth[:, :n], found.drawn_verdicts[:, :n], found.verdicts
    draws = Rectified(
        ys, fs, verdicts.mean(axis=1), verdicts.max(axis=1), verdicts.min(axis=1), 1.0
    )
    lower, upper, _ = power_tuned_bounds(
        draws, 1.0 - CONFIDENCE, tuning_for(kind), fixed_lean=found.slope
    )
    return lower, upper


def _previous(kind: str, verdicts: w.Array, ys: w.Array, fs: w.Array) -> Bounds:
    """The betting interval on ``(y - f + 1) / 2``, mapped back: lambda = 1."""
    found = bounded_mean_bounds(
        (ys - fs + 1.0) / 2.0, CONFIDENCE, tuning=tuning_for(kind), ordered=True
    )
    mean = verdicts.mean(axis=1)
    lower = np.clip(mean + 2.0 * found[:, 0] - 1.0, 0.0, 1.0)
    return lower, np.clip(mean + 2.0 * found[:, 1] - 1.0, 0.0, 1.0)


def _labels_only(kind: str, ys: w.Array) -> Bounds:
    if kind != "pass_fail":
        found = bounded_mean_bounds(ys, CONFIDENCE, ordered=True)
        return found[:, 0], found[:, 1]
    n = ys.shape[1]
    passes = ys.sum(axis=1).astype(np.int64)
    exact = {int(k): clopper_pearson(int(k), n, CONFIDENCE) for k in np.unique(passes)}
    lower = np.array([exact[int(k)].lower for k in passes])
    return lower, np.array([exact[int(k)].upper for k in passes])


def _ppi_reference(sims: int, python: Path) -> dict[str, w.Array]:
    """PPI++ on the same releases, from `ppi_python` in its own environment."""
    if not python.exists():
        raise SystemExit(
            f"{python} is missing: python3 -m venv bench/.ppi-venv && "
            "bench/.ppi-venv/bin/pip install ppi_python"
        )
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "ppi.npz"
        command = [str(python), "-m", "bench.labels._ppi_reference", "--sims", str(sims)]
        root = Path(__file__).resolve().parents[2]
        # One core for the reference as for the bench: the machine is shared.
        threads = dict.fromkeys(("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"), "1")
        env = {**os.environ, **threads}
        subprocess.run([*command, "--out", str(out)], check=True, cwd=root, env=env)
        with np.load(out) as found:
            return {key: found[key] for key in found.files}


def _stats(bounds: list[Bounds], truth: w.Array) -> dict[str, float]:
    lower = np.concatenate([b[0] for b in bounds])
    upper = np.concatenate([b[1] for b in bounds])
    covered = float(np.mean((lower <= truth) & (truth <= upper)))
    return {
        "coverage": round(covered, 4),
        "se": round(float(np.sqrt(covered * (1.0 - covered) / truth.size)), 4),
        "width": round(float(np.mean(upper - lower)), 4),
    }


def _cell(kind: str, name: str, sims: int, ppi: dict[str, w.Array]) -> list[dict[str, Any]]:
    found: dict[tuple[str, int], list[Bounds]] = {}
    truth, judge_mean = [], []
    for chunk in w.releases(kind, name, sims):
        truth.append(chunk.run_mean)
        judge_mean.append(chunk.verdicts.mean(axis=1))
        for n in w.LABELS:
            ys, fs = chunk.drawn_truth[:, :n], chunk.drawn_verdicts[:, :n]
            adaptive = _adaptive(kind, chunk, n)
            found.setdefault(("adaptive", n), []).append(adaptive)
            found.setdefault(("betting_and_exact", n), []).append(
                _betting_and_exact(kind, chunk, n, adaptive)
            )
            found.setdefault(("ideal_lean", n), []).append(_ideal_lean(kind, chunk, n))
            found.setdefault(("previous", n), []).append(_previous(kind, chunk.verdicts, ys, fs))
            found.setdefault(("labels_only", n), []).append(_labels_only(kind, ys))
    run_mean = np.concatenate(truth)
    key = f"{kind}|{name}|"
    same = np.array_equal(ppi[key + "run_mean"], run_mean) and np.array_equal(
        ppi[key + "judge_mean"], np.concatenate(judge_mean)
    )
    if not same:
        raise AssertionError(f"{kind}, {name}: the PPI++ reference drew other releases")
    rows = []
    for n in w.LABELS:
        found[("ppi++", n)] = [(ppi[f"{key}{n}.lower"], ppi[f"{key}{n}.upper"])]
        row: dict[str, Any] = {"kind": kind, "judge": name, "labels": n}
        row.update({method: _stats(found[(method, n)], run_mean) for method in METHODS})
        for method in ("labels_only", "ppi++"):
            row[f"adaptive / {method}"] = round(row["adaptive"]["width"] / row[method]["width"], 3)
        for method in ("betting_and_exact", "previous", "ideal_lean"):
            row[f"{method} / ppi++"] = round(row[method]["width"] / row["ppi++"]["width"], 3)
        rows.append(row)
    return rows


def adaptive(sims: int, python: Path = PPI_PYTHON) -> list[dict[str, Any]]:
    """Every cell: pass/fail and score judges, each number of labels, four intervals."""
    ppi = _ppi_reference(sims, python)
    rows: list[dict[str, Any]] = []
    for kind, judges in w.KINDS.items():
        for name in judges:
            rows += _cell(kind, name, sims, ppi)
            print(f"adaptive: {kind}, {name}", flush=True)
    return rows


def _cell_text(stats: dict[str, float]) -> str:
    return f"{stats['coverage']:.3f} ± {stats['se']:.3f} | {stats['width']:.4f}"


def markdown(rows: list[dict[str, Any]]) -> str:
    """The table as bench/README.md shows it."""
    shown = ("adaptive", "labels_only", "ppi++", "betting_and_exact", "previous", "ideal_lean")
    ratios = (
        "adaptive / labels_only",
        "adaptive / ppi++",
        "betting_and_exact / ppi++",
        "previous / ppi++",
        "ideal_lean / ppi++",
    )
    head = (
        "| kind | judge | n | adaptive: coverage | width | labels only: coverage | width "
        "| PPI++: coverage | width | betting and exact: coverage | width "
        "| previous: coverage | width | ideal lean: coverage | width "
        "| adaptive / labels only | adaptive / PPI++ | betting and exact / PPI++ "
        "| previous / PPI++ | ideal lean / PPI++ |"
    )
    lines = [head, "|" + "---|" * 20]
    for row in rows:
        cells = " | ".join(_cell_text(row[method]) for method in shown)
        figures = " | ".join(f"{row[ratio]:.2f}" for ratio in ratios)
        lines.append(
            f"| {row['kind']} | {row['judge']} | {row['labels']:,} | {cells} | {figures} |"
        )
    return "\n".join(lines)
