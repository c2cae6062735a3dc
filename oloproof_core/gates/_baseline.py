"""Finding the baseline run a policy's no_regression rules compare against.

Order: a baseline handed to `decide` (the library's `baseline=` or the CLI's
`--baseline`) wins; otherwise the policy's `baseline:` entry is resolved — a
result file directly, a named release or the last approved release through
the store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oloproof_core.errors import OloproofError
from oloproof_core.gates._errors import PolicyError
from oloproof_core.gates._schema import BaselineSpec

if TYPE_CHECKING:
    from oloproof_core.result import Result
    from oloproof_core.store import Store


def resolve_baseline(
    spec: BaselineSpec | None, candidate: Result, store: Store | None, needed_by: str
) -> Result:
    if spec is None:
        raise PolicyError(
            f"{needed_by}: a no_regression rule needs a baseline, and none is "
            "available: add 'baseline: {run: path/to/result.json}' (or {release:"
            " 'name@version'}, {last_approved: true}) to the policy, or pass one "
            "(evaluate(..., baseline=result), oloproof gate --baseline FILE)"
        )
    if spec.kind == "run":
        from oloproof_core.result_io import load_result

        assert spec.value is not None
        try:
            return load_result(spec.value)
        except OloproofError as exc:
            raise PolicyError(f"{spec.where}: cannot load the baseline: {exc}") from None
    system_name, release = _release_of(spec, candidate)
    finder = getattr(store, "find_baseline", None)
    if finder is None:
        raise PolicyError(
            f"{spec.where}: a {spec.kind} baseline is looked up in the store of "
            "recorded runs, and none is available here; use "
            "'baseline: {run: path/to/result.json}' or pass a baseline"
        )
    found: Result | None = finder(system_name, release)
    if found is None:
        wanted = f"{system_name}@{release}" if release else f"an approved {system_name} run"
        raise PolicyError(
            f"{spec.where}: no recorded run of {wanted} to compare against; "
            "record one first or point 'baseline' at a result file"
        )
    return found


def _release_of(spec: BaselineSpec, candidate: Result) -> tuple[str, str | None]:
    system: dict[str, Any] = candidate.provenance.get("system") or {}
    own_name = str(system.get("name") or "")
    if spec.kind == "last_approved":
        return own_name, None
    value = spec.value or ""
    if "@" in value:
        name, _, version = value.rpartition("@")
        return name, version
    return own_name, value
