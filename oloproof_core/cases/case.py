"""A case as it moves through a run: the row, the system's output, measurements, verdicts."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from oloproof_core._util.canonical import canonical_json, digest_text
from oloproof_core.cases.observations import Measurements
from oloproof_core.cases.transcript import Transcript, transcript_digest
from oloproof_core.cases.verdict import Verdict
from oloproof_core.datasets.rows import Row

CASE_PARTS = ("input", "output", "expected", "artifacts", "measurements", "trace", "workspace")
"""What an evaluator may read; `measurements` (wall time, the system's model cost) is for
metrics that trade accuracy against speed and cost, `trace` (the transcript) for
evaluators of what an agent did on the way to its output, `workspace` for the files a
task's agent left in its workspace."""


@dataclass(slots=True)
class CaseError:
    """Why a case (or one verdict) is missing: the exception's type, message and traceback."""

    type: str
    message: str
    traceback: str = ""

    def __str__(self) -> str:
        return f"{self.type}: {self.message}"

    def to_dict(self) -> dict[str, str]:
        return {"type": self.type, "message": self.message, "traceback": self.traceback}


@dataclass(slots=True)
class CaseResult:
    id: str
    input: dict[str, Any]
    expected: dict[str, Any] | None
    split: str | None = None
    cluster: str | None = None
    output: Any = None
    output_json: str | None = None
    error: CaseError | None = None
    artifacts: dict[str, Any] = field(default_factory=dict)
    measurements: Measurements = field(default_factory=Measurements)
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    _digests: dict[str, str] = field(default_factory=dict, repr=False)
    repeat: int = 0
    """Which of its case's repeated runs this is (1, 2, ...); 0 in a run without repeats."""
    trace: Transcript | None = None
    """The case's transcript (model calls through the gateway, the system's own steps)."""
    workspace: dict[str, Any] | None = None
    """The files the system left in the case's workspace, packed by its process
    (`cases.workspace_pack`); None for a case without a workspace. Judged, never stored."""

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as its fields: a run hands batches of cases to its store's process, and
        # this form is a third of the bytes and twice as quick as the slots' default.
        return (
            CaseResult,
            (
                self.id,
                self.input,
                self.expected,
                self.split,
                self.cluster,
                self.output,
                self.output_json,
                self.error,
                self.artifacts,
                self.measurements,
                self.verdicts,
                self._digests,
                self.repeat,
                self.trace,
                # Not the workspace: it is judged before the case is recorded, never stored.
            ),
        )

    @classmethod
    def from_row(cls, row: Row) -> CaseResult:
        return cls(
            id=row.id,
            input=row.input,
            expected=row.expected,
            split=row.split,
            cluster=row.cluster,
            _digests={"input": row.input_digest, "expected": row.expected_digest},
            repeat=row.repeat,
            error=None if row.refused is None else CaseError("WorkspaceError", row.refused),
        )

    @property
    def missing(self) -> bool:
        return self.error is not None

    @property
    def latency_ms(self) -> float | None:
        return self.measurements.latency_ms

    @property
    def cost_usd(self) -> float | None:
        return self.measurements.system_cost_usd

    def part_digest(self, part: str) -> str:
        """Digest of one case part, computed once; the verdict cache keys on these."""
        digest = self._digests.get(part)
        if digest is None:
            if part == "output":
                digest = digest_text(self.output_json or "null")
            elif part == "artifacts":
                digest = digest_text(canonical_json(self.artifacts))
            elif part == "trace":
                return transcript_digest(self.trace)  # final only once the case is filed
            elif part == "workspace":
                return digest_text(canonical_json(self.workspace))  # set once the case ran
            elif part == "measurements":
                # Not memoised: the figures are only final once the system call returned.
                return digest_text(canonical_json(self.measurements.observe().to_dict()))
            else:
                digest = digest_text(canonical_json(getattr(self, part)))
            self._digests[part] = digest
        return digest

    def without_payload(self) -> CaseResult:
        """The case as a run keeps it once the case is recorded: what the statistics, the
        gate and the report read (its id, split, cluster, error, measurements and verdict
        values), without its input, expected value, output, artifacts, transcript,
        feedback or tracebacks, which the store holds."""
        error = self.error
        return CaseResult(
            id=self.id,
            input={},
            expected=None,
            split=self.split,
            cluster=self.cluster,
            error=None if error is None else CaseError(error.type, error.message),
            measurements=self.measurements,
            verdicts={name: verdict.without_feedback() for name, verdict in self.verdicts.items()},
            repeat=self.repeat,
        )

    def to_dict(self) -> dict[str, Any]:
        repeat = {"repeat": self.repeat} if self.repeat else {}
        trace = {"trace": self.trace.to_dict()} if self.trace is not None else {}
        return {
            "id": self.id,
            **repeat,
            "input": self.input,
            "expected": self.expected,
            "split": self.split,
            "cluster": self.cluster,
            "output": self.output,
            "error": None if self.error is None else self.error.to_dict(),
            "latency_ms": self.latency_ms,
            "cost_usd": self.cost_usd,
            "model_calls": [asdict(call) for call in self.measurements.model_calls],
            "artifacts": self.artifacts,
            "verdicts": {name: verdict.to_dict() for name, verdict in self.verdicts.items()},
            **trace,
        }


def not_json_error(output: Any, problem: object) -> CaseError:
    """Why an output that cannot be recorded makes its case missing."""
    return CaseError(
        type="OutputNotSerializable",
        message=f"the system returned {type(output).__name__}, which cannot be recorded "
        f"({problem}); return dicts, lists, strings, numbers, booleans or None",
    )
