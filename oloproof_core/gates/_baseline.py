"""Finding the baseline run a policy's no_regression rules compare against.

Order: a baseline handed to `decide` (the library's `baseline=` or the CLI's
`--baseline`) wins; otherwise the policy's `baseline:` entry is resolved — a
result file directly, a named release or the last approved release through
the store. A `last_approved` baseline does not exist before a release of the
system is approved: it resolves to None, and the rules that need it say what the
policy's `on_first_release` says. Runs resolve the baseline before their first
case (`Policy.baseline_before_run`), so a file or release that is not there stops the
run before any case is spent on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof_core.errors import OloproofError
from oloproof_core.gates._errors import PolicyError
from oloproof_core.gates._schema import BaselineSpec

if TYPE_CHECKING:
    from oloproof_core.results.result import Result
    from oloproof_core.results.store import Store


def resolve_baseline(
    spec: BaselineSpec | None, system_name: str, store: Store | None, needed_by: str
) -> Result | None:
    """The baseline a run of `system_name` is compared with: PolicyError when there is
    none to find (no `baseline:`, a file that does not load, a release not recorded);
    None for a `last_approved` baseline while no release of the system is approved."""
    if spec is None:
        raise PolicyError(
            f"{needed_by}: a no_regression rule needs a baseline, and none is "
            "available: add 'baseline: {run: path/to/result.json}' (or {release:"
            " 'name@version'}, {last_approved: true}) to the policy, or pass one "
            "(evaluate(..., baseline=result), oloproof gate --baseline FILE)"
        )
    if spec.kind == "run":
        from oloproof_core.results.reading import load_result

        assert spec.value is not None
        try:
            return load_result(spec.value)
        except OloproofError as exc:
            raise PolicyError(f"{spec.where}: cannot load the baseline: {exc}") from None
    system_name, release = spec.looked_up(system_name)
    finder = getattr(store, "find_baseline", None)
    if finder is None:
        raise PolicyError(
            f"{spec.where}: a {spec.kind} baseline is looked up in the store of "
            "recorded runs, and none is available here; use "
            "'baseline: {run: path/to/result.json}' or pass a baseline"
        )
    found: Result | None = finder(system_name, release)
    if found is None and spec.kind == "last_approved":
        return None
    if found is None:
        raise PolicyError(
            f"{spec.where}: no recorded run of {system_name}@{release} to compare against; "
            "record one first or point 'baseline' at a result file"
        )
    return found
