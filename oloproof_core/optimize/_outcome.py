"""An optimization's outcome and its text: candidates on val, then val and test side by side."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from oloproof_core.optimize._ledger import CandidateRecord


@dataclass
class OptimizationResult:
    optimization_id: str
    engine: str
    settings: dict[str, Any]
    candidates: list[CandidateRecord]
    seed: CandidateRecord
    winner: CandidateRecord
    budget_used: dict[str, Any]
    splits: dict[str, Any]
    proof: dict[str, Any]
    evaluations: dict[str, int]

    @property
    def gate(self) -> Mapping[str, Any] | None:
        return self.proof.get("gate")

    def __str__(self) -> str:
        return render_optimization(self)


def _interval(figures: Mapping[str, Any]) -> str:
    estimate = figures.get("estimate")
    if estimate is None:
        return "—"
    return f"{estimate:.3f} [{figures.get('lower', 0):.3f}, {figures.get('upper', 0):.3f}]"


def render_optimization(result: OptimizationResult) -> str:
    used = result.budget_used
    lines = [
        f"optimization {result.optimization_id} · engine {result.engine} · "
        f"{len(result.candidates)} candidates · stopped by {used.get('stopped_by') or '—'}",
        f"budget used: {used.get('metric_calls', 0)} metric calls, "
        f"${used.get('usd', 0):.4f}, {used.get('wall_time_s', 0):.1f} s",
        "",
        f"{'candidate':<32} {'parents':<10} val {result.proof.get('objective', '')}",
    ]
    for record in result.candidates:
        parents = ",".join(str(index) for index in record.parents) or "—"
        marker = " ← winner" if record.index == result.winner.index else ""
        lines.append(f"{record.version:<32} {parents:<10} {_interval(record.val)}{marker}")
    lines += ["", f"{'':<10} {'val':<26} {'test':<26} optimism gap"]
    for role in ("seed", "winner"):
        item = result.proof[role]
        gap = item.get("optimism_gap")
        lines.append(
            f"{role:<10} {_interval(item['val']):<26} {_interval(item['test']):<26} "
            + ("—" if gap is None else f"{gap:+.3f}")
        )
    if result.winner.index == result.seed.index:
        lines += ["", "no candidate beat the seed on val: the seed is the winner"]
    gate = result.proof.get("gate")
    if gate:
        lines += ["", f"gate on test: {gate.get('outcome')} — {gate.get('summary', '')}"]
    return "\n".join(lines)
