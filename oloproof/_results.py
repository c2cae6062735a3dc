"""Results by reference: `load(path or run id)` and `gate(result, policy, baseline=...)`.

Everything that takes a run (a baseline, a result to gate or compare) accepts the
same three forms: a `Result`, the path of a result file (`oloproof run --json`), or
the id of a run recorded in the project's store (`12`, `"12"`, `"#12"`; a run kept
in memory by `OLOPROOF_RECORD=0` has an id like `"mem-3"`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from oloproof._store import default_store, run_url
from oloproof_core import OloproofError, Result, Store

if TYPE_CHECKING:
    from oloproof_core.gates import Gate

RunRef = Result | str | os.PathLike[str] | int
"""A run: a Result, a result file's path, or a recorded run's id."""


def _run_id(reference: str | int) -> str | None:
    """The run id a reference names, or None when it is not one."""
    if isinstance(reference, int) and not isinstance(reference, bool):
        return str(reference)
    text = str(reference).strip().removeprefix("#")
    if text.isdigit() or (text.startswith("mem-") and text[4:].isdigit()):
        return text
    return None


def _read_result_file(path: str) -> Result:
    # Imported on use: reading a result file brings the statistics (scipy).
    from oloproof_core import load_result as read

    return read(path)


def load(source: RunRef, *, store: Store | None = None) -> Result:
    """A run as a `Result`: from a result file, or from the store by its run id.

    `oloproof.load("v1.json")`, `oloproof.load(12)`. A recorded run comes back with
    its metrics, cases, verdicts, provenance and gate (`result.extras["gate"]`).
    """
    if isinstance(source, Result):
        return source
    if isinstance(source, bool) or not isinstance(source, (str, int, os.PathLike)):
        raise OloproofError(
            f"cannot load a run from {type(source).__name__}: give a Result, the path of a "
            "result file (oloproof run --json) or a recorded run's id"
        )
    if isinstance(source, os.PathLike):
        return _read_result_file(os.fspath(source))
    if os.path.exists(str(source)):
        return _read_result_file(str(source))
    run_id = _run_id(source)
    if run_id is None:  # not a run id: a result file that is not there says so
        return _read_result_file(str(source))
    return _from_store(run_id, store if store is not None else default_store())


def _from_store(run_id: str, store: Store) -> Result:
    loader: Any = getattr(store, "load_run", None)
    if loader is not None:
        result: Result = loader(run_id)
    elif run_id.startswith("mem-") and hasattr(store, "run"):
        try:
            result = store.run(run_id)
        except KeyError:
            raise OloproofError(f"no run {run_id} in this process's memory") from None
    else:
        raise OloproofError(
            f"run {run_id} would be read from the project's store, but recording is off "
            "here (OLOPROOF_RECORD=0); unset it, or load a result file instead"
        )
    link = run_url(result.run_id)
    if link is not None:
        result.extras.setdefault("run_url", link)
    return result


def gate(
    result: RunRef,
    policy: Any,
    *,
    baseline: RunRef | None = None,
    store: Store | None = None,
) -> Gate:
    """Decide a run under a policy, as `oloproof gate` does.

    `result` and `baseline` are Results, result files or run ids; `policy` is a
    release.yaml path, a dict of the same shape or a Policy. A policy's own
    `baseline:` (a release, the last approved run) is looked up in the project's
    store, the same one `evaluate()` records into.
    """
    chosen = store if store is not None else default_store()
    # Imported here: the gates bring the statistics (scipy), which `import oloproof` skips.
    from oloproof_core.gates import load_policy

    decided: Gate = load_policy(policy).decide(
        load(result, store=chosen),
        baseline=None if baseline is None else load(baseline, store=chosen),
        store=chosen,
    )
    return decided
