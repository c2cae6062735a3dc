"""An optimization's winning texts from the library, as the dashboard's download gives them.

`oloproof winner` does the same through this function. It reads the project's store (the
same data folder or DATABASE_URL as every command), acting as the process itself.
"""

from __future__ import annotations

import os
from typing import IO, Any

from oloproof._cases import _on_platform
from oloproof_core import OloproofError, text_written


def winner_texts(
    optimization: int | str,
    destination: str | os.PathLike[str] | IO[str] | None = None,
    *,
    format: str | None = None,
) -> dict[str, Any]:
    """The winner of a recorded optimization: `{"optimization", "system", "release",
    "seed_release", "candidate", "val", "components"}`, where `components` maps each
    component's name to its winning text (what `@system(components=...)` takes).

    With `destination` (a path or an open text file), also writes it there as JSON or
    YAML (from a path's extension unless `format` says). An optimization with no winner
    yet is refused, naming its status.
    """
    text = str(optimization).strip().removeprefix("#")
    if isinstance(optimization, bool) or not text.isdigit():
        raise OloproofError(f"an optimization is named by its id (3 or '#3'), got {optimization!r}")
    if isinstance(destination, str | os.PathLike) and format is None:
        format = os.path.splitext(os.fspath(destination))[1] or None

    def work() -> tuple[dict[str, Any], str | None]:
        from runs.access import LOCAL
        from runs.selectors.optimization_export import winner_document, winner_format
        from runs.selectors.optimizations import optimization_winner

        chosen = winner_format(format)
        winner = optimization_winner(user=LOCAL, optimization_id=int(text))
        written = None if destination is None else winner_document(winner, format=chosen)
        return winner, written

    winner, document = _on_platform(work)
    if document is None:
        return winner
    if isinstance(destination, str | os.PathLike):
        with text_written(destination, what="the winner's texts") as handle:
            handle.write(document)
    elif destination is not None:
        destination.write(document)
    return winner
