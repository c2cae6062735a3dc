"""The cases of two repeated runs against their own noise, as lines for the terminal."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from oloproof_core.results.compare._repeat_cases import RepeatCases

NO_REPEATS_NOTE = (
    "neither run repeated its cases, so no single case's change can be told from its "
    "noise: one try per side is never significant (run with --repeats 5 or more); cases "
    "are only changed or unchanged"
)
_COUNTED = ("regressed", "improved", "flaky", "changed", "stable_pass", "stable_fail", "missing")


def repeat_case_lines(cases: RepeatCases, status: str | None = None) -> list[str]:
    """How many cases have each status and, when `status` is named, those cases listed."""
    before, after = (
        f"auto, up to {count}" if auto else str(count)
        for count, auto in zip(cases.repeats, cases.auto, strict=True)
    )
    counts = cases.counts()
    shown = ", ".join(
        f"{counts[name]} {name.replace('_', ' ')}" for name in _COUNTED if counts[name]
    )
    lines = [
        "",
        f"cases against their own noise ({before} → {after} repeats per case): "
        + (shown or "none"),
        f"  {cases.method}",
    ]
    if not cases.with_repeats:
        lines.append(f"  ! {NO_REPEATS_NOTE}")
    if status is not None:
        chosen = cases.filter(status)
        lines.append(f"{status.replace('_', ' ')} cases: {len(chosen)}")
        lines.extend(f"  {case.case_id}  {case.text}" for case in chosen)
    return lines
