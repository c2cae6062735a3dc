"""The labels a run's metric has: its queue's draws, their probabilities, people's values.

A recorded run carries these (the platform fills them from its tables), so the
library, the gate and a comparison read labels the same way, offline included:
a result file keeps them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from oloproof_core.labels._sampling import Draw

__all__ = ["MetricLabels"]


@dataclass(frozen=True, slots=True)
class MetricLabels:
    """One metric's labels in one run.

    `sample` names the queue the draws come from: two runs on the same cases share
    it, so their labels can be paired. `truth` maps a case id to the mean of
    people's values for this run's output. `pairs` holds, per case two people
    labelled, the first two people's values (for their agreement with each other).
    """

    criterion: str
    sample: str
    probabilities: Mapping[str, float]
    draws: tuple[Draw, ...]
    truth: Mapping[str, float]
    pairs: tuple[tuple[float, float], ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "criterion": self.criterion,
            "sample": self.sample,
            "probabilities": dict(self.probabilities),
            "draws": [[d.position, d.case_id, d.probability] for d in self.draws],
            "truth": dict(self.truth),
            "pairs": [list(pair) for pair in self.pairs],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MetricLabels:
        return cls(
            criterion=str(data["criterion"]),
            sample=str(data["sample"]),
            probabilities={str(k): float(v) for k, v in data["probabilities"].items()},
            draws=tuple(Draw(int(p), str(c), float(q)) for p, c, q in data["draws"]),
            truth={str(k): float(v) for k, v in data["truth"].items()},
            pairs=tuple((float(a), float(b)) for a, b in data.get("pairs", ())),
        )
