"""The evaluator contract: a criterion, the case parts it reads, and a version."""

from __future__ import annotations

import math
import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from functools import cached_property
from numbers import Real
from typing import Any, Literal

from oloproof_core._util.canonical import canonical_json, digest_text
from oloproof_core._util.limits import label_problem
from oloproof_core.cases.verdict import Verdict
from oloproof_core.errors import ContractError, DeclarationError
from oloproof_core.judging.evaluators._case_view import CaseView, check_reads
from oloproof_core.judging.evaluators._source import source_digest, source_location

ValueType = Literal["pass_fail", "score"]
_CRITERION = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_\-]*$")
_WHOLE_CONVERSATION_PARTS = ("measurements", "trace")


class Evaluator(ABC):
    """Judges one case on one criterion.

    Subclasses implement `judge`; the engine consults the verdict cache first and
    calls `judge` only for cases whose declared parts it has not seen before at
    this evaluator's version.
    """

    io_bound: bool = False
    """True for evaluators that wait on a model or network; the engine judges them concurrently."""
    is_async: bool = False
    """True when `judge` returns an awaitable: the engine awaits the cases on one event loop."""
    per_turn: bool = False
    """True to judge a conversation turn by turn (`oloproof_core.judging.turns`), its verdict
    folded from its turns'; a single case is its one turn."""

    def __init__(
        self,
        *,
        criterion: str,
        reads: tuple[str, ...],
        value_type: ValueType = "pass_fail",
        score_range: tuple[float, float] = (0.0, 1.0),
        per_turn: bool = False,
    ) -> None:
        owner = f"{type(self).__name__}(criterion={criterion!r})"
        if not isinstance(criterion, str) or not _CRITERION.match(criterion):
            raise DeclarationError(
                f"{owner}: a criterion is a name of letters, digits, '_' "
                "or '-' (no dots: dots separate sub-scores)"
            )
        too_long = label_problem(criterion, "criterion")
        if too_long:
            shown = f"{type(self).__name__}(criterion={criterion[:40]!r}…)"
            raise DeclarationError(f"{shown}: the criterion {too_long}")
        if value_type not in ("pass_fail", "score"):
            raise DeclarationError(
                f"{owner}: value_type must be 'pass_fail' or 'score', got {value_type!r}"
            )
        self.criterion = criterion
        self.reads = check_reads(reads, owner)
        self.value_type: ValueType = value_type
        self.score_range = check_score_range(score_range, owner)
        self.per_turn = check_per_turn(per_turn, self.reads, owner)

    @property
    def kind(self) -> str:
        return type(self).__name__

    @property
    def sub_score_range(self) -> tuple[float, float]:
        return self.score_range

    def parameters(self) -> Mapping[str, Any]:
        """The settings that change verdicts; part of the version."""
        return {}

    def source_object(self) -> Any:
        """The object whose defining file is digested into the version."""
        return type(self)

    @property
    def source(self) -> str | None:
        return source_location(self.source_object())

    def code_digest(self) -> str:
        """Digest of the code behind the verdicts; part of the version."""
        return source_digest(self.source_object())

    def refresh(self) -> None:
        """Called by the engine before each run; evaluators backed by a file re-read it here."""
        return  # most evaluators are fixed once constructed: nothing to re-read

    @cached_property
    def version(self) -> str:
        """Changes whenever the defining file, the parameters or the declaration change."""
        declaration: dict[str, Any] = {
            "kind": self.kind,
            "criterion": self.criterion,
            "reads": list(self.reads),
            "value_type": self.value_type,
            "score_range": list(self.score_range),
            "parameters": self.parameters(),
            "source": self.code_digest(),
        }
        if self.per_turn:  # named only when on, so the versions of others stay as they were
            declaration["per_turn"] = True
        return digest_text(canonical_json(declaration))[:32]

    @abstractmethod
    def judge(self, case: CaseView) -> Any:
        """Return a Verdict, a bool (pass/fail), a number (score), or (value, feedback)."""

    def to_verdict(self, raw: Any) -> Verdict:
        """Check what `judge` returned against the declared value type."""
        if isinstance(raw, Verdict):
            return raw
        feedback = None
        if isinstance(raw, tuple) and len(raw) == 2 and isinstance(raw[1], str):
            raw, feedback = raw
        if self.value_type == "pass_fail":
            if isinstance(raw, bool) or type(raw).__name__ == "bool_":
                return Verdict(value=1.0 if raw else 0.0, feedback=feedback)
            raise ContractError(
                f"evaluator {self.criterion!r} returned {_shown(raw)}; a pass/fail evaluator "
                "returns True or False (or declare value_type='score', score_range=(lo, hi))"
            )
        return Verdict(value=self.check_score(raw), feedback=feedback)

    def check_score(self, raw: Any, name: str | None = None) -> float:
        label = self.criterion if name is None else f"{self.criterion}.{name}"
        too_long = None if name is None else label_problem(label, "metric")
        if too_long and name is not None:
            raise ContractError(
                f"sub-score {name[:40]!r}… of evaluator {self.criterion!r}: its metric name "
                f"{label[:40]!r}… {too_long}; give the sub-score a shorter name"
            )
        low, high = self.score_range if name is None else self.sub_score_range
        if isinstance(raw, bool) or not isinstance(raw, Real):
            raise ContractError(
                f"evaluator {label!r} returned {_shown(raw)}; a score "
                f"evaluator returns a number in {low:g}..{high:g}"
            )
        value = float(raw)
        if math.isnan(value) or not low <= value <= high:
            raise ContractError(
                f"evaluator {label!r} returned score {value!r}, outside its range "
                f"{low:g}..{high:g}; {self.range_hint()}"
            )
        return value

    def range_hint(self) -> str:
        return "declare the real range with score_range=(lo, hi)"

    def describe(self) -> dict[str, Any]:
        """Provenance record of this evaluator."""
        described: dict[str, Any] = {
            "criterion": self.criterion,
            "kind": self.kind,
            "version": self.version,
            "reads": list(self.reads),
            "value_type": self.value_type,
            "score_range": list(self.score_range),
            "parameters": dict(self.parameters()),
            "source": self.source,
        }
        if self.per_turn:
            described["per_turn"] = True
        return described

    def __repr__(self) -> str:
        return f"<{self.kind} {self.criterion!r} version={self.version[:12]}>"


def check_score_range(score_range: Any, owner: str) -> tuple[float, float]:
    try:
        low, high = (float(bound) for bound in score_range)
    except (TypeError, ValueError):
        raise DeclarationError(
            f"{owner}: score_range must be a pair (lo, hi) of numbers, got {score_range!r}"
        ) from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise DeclarationError(
            f"{owner}: score_range must satisfy lo < hi with finite numbers, got {score_range!r}"
        )
    return low, high


def check_per_turn(per_turn: Any, reads: tuple[str, ...], owner: str) -> bool:
    if not isinstance(per_turn, bool):
        raise DeclarationError(f"{owner}: per_turn must be True or False, got {per_turn!r}")
    whole_only = [part for part in reads if part in _WHOLE_CONVERSATION_PARTS]
    if per_turn and whole_only:
        raise DeclarationError(
            f"{owner}: per_turn=True judges each turn's input, output, expected value and "
            f"artifacts; {whole_only[0]!r} is measured for the whole conversation: judge it "
            "per conversation (per_turn=False)"
        )
    return per_turn


def _shown(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:80]}{'…' if len(text) > 80 else ''}"
