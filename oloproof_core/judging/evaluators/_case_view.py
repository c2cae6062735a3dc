"""The case as an evaluator sees it: only the parts the evaluator declared in `reads`."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from oloproof_core.cases.case import CASE_PARTS, CaseResult
from oloproof_core.cases.observations import Observation
from oloproof_core.cases.transcript import Transcript
from oloproof_core.cases.workspace_pack import WorkspaceCopy
from oloproof_core.errors import UndeclaredReadError


class CaseView:
    """Read access to one case, limited to the declared parts.

    The verdict cache keys on exactly the parts an evaluator declares, so a read of
    any other part would let a stale verdict through; it is refused instead.
    """

    __slots__ = ("_copies", "_criterion", "_reads", "_record", "_workspace")

    def __init__(
        self, record: CaseResult, reads: tuple[str, ...], criterion: str, *, copies: bool = True
    ) -> None:
        """`copies=False` for a record no one else reads (an evaluator's process builds
        one per verdict): its parts are handed out as they are."""
        self._record = record
        self._reads = reads
        self._criterion = criterion
        self._copies = copies
        self._workspace: WorkspaceCopy | None = None

    @property
    def id(self) -> str:
        return self._record.id

    def _read(self, part: str) -> Any:
        if part not in self._reads:
            declared = ", ".join(repr(p) for p in (*self._reads, part))
            raise UndeclaredReadError(
                f"evaluator {self._criterion!r} read case.{part} but declared "
                f"reads={self._reads!r}; declare it: reads=({declared})"
            )
        # A copy: an evaluator that changes what it reads changes neither the record nor
        # what the next evaluator sees.
        value = getattr(self._record, part)
        return copy.deepcopy(value) if self._copies else value

    @property
    def output(self) -> Any:
        return self._read("output")

    @property
    def expected(self) -> Mapping[str, Any] | None:
        return self._read("expected")  # type: ignore[no-any-return]

    @property
    def input(self) -> Mapping[str, Any]:
        return self._read("input")  # type: ignore[no-any-return]

    @property
    def artifacts(self) -> Mapping[str, Any]:
        return self._read("artifacts")  # type: ignore[no-any-return]

    @property
    def measurements(self) -> Observation:
        """The system call's wall time and model cost, as the engine measured them."""
        self._read("measurements")
        return self._record.measurements.observe()

    @property
    def trace(self) -> Transcript:
        """The case's transcript (empty when the system made no model call through the
        gateway and added no step of its own)."""
        transcript = self._read("trace")
        return transcript if isinstance(transcript, Transcript) else Transcript()

    @property
    def workspace(self) -> WorkspaceCopy | None:
        """The case's workspace as the system left it, unpacked into a temporary folder of
        this evaluator's own (removed with this view); None for a case without files."""
        if self._workspace is None:
            self._read_declared("workspace")
            packed = self._record.workspace
            if packed is None:
                return None
            self._workspace = WorkspaceCopy(packed)
        return self._workspace

    def _read_declared(self, part: str) -> None:
        if part not in self._reads:
            self._read(part)  # raises, naming what to declare

    def __repr__(self) -> str:
        return f"<case {self.id!r} reads={self._reads!r}>"


def check_reads(reads: Any, owner: str) -> tuple[str, ...]:
    if isinstance(reads, str) or not isinstance(reads, (tuple, list)):
        raise TypeError(
            f"{owner}: reads must be a tuple of part names such as "
            f"('output', 'expected'), got {reads!r}"
        )
    unknown = [part for part in reads if part not in CASE_PARTS]
    if unknown:
        raise ValueError(
            f"{owner}: unknown case part {unknown[0]!r} in reads; parts are {', '.join(CASE_PARTS)}"
        )
    return tuple(dict.fromkeys(reads))
