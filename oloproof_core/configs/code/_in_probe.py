"""The probe's process: import the code a run config names and declare what it found.

Started by `_probe` as `python -m oloproof_core.configs.code._in_probe READ_FD WRITE_FD`,
in the run's sandbox, with the environment a system's process gets. It reads one request
(the config's folder, its code roots, the system's reference and the evaluator entries
that are user code, a metric file with the bytes the run read), imports each, and sends
back one JSON reply: for each, its declaration or the error, in the words the parent
would have used. The system and evaluators travel on as this process packs them (a
reference, or a pickle the parent passes on without reading). Asked to (`then_serve`,
a request naming the system alone), it then waits to become the system's first process.
"""

from __future__ import annotations

import base64
import contextlib
import os
import sys
from collections.abc import Mapping
from typing import Any

from oloproof_core._util.imports import _where, load_module, load_object
from oloproof_core.errors import OloproofError
from oloproof_core.execution.isolation._child import _apply_setup, _prepare_process, _read_setup
from oloproof_core.execution.isolation._protocol import frame
from oloproof_core.models._loaded import loads_models


def main(argv: list[str]) -> int:
    read_fd, write_fd = int(argv[1]), int(argv[2])
    _prepare_process(os.getppid())
    request = _read_setup(read_fd)
    if request is None:
        return 0
    _apply_setup(request)
    reply = {
        "system": _declared(_system, request, request.get("system")),
        "evaluators": [_declared(_evaluator, request, entry) for entry in request["evaluators"]],
    }
    os.write(write_fd, frame(reply))
    if request.get("then_serve") and "declared" in (reply["system"] or {}):
        # The pool's first process (`isolation._first_process`): serve if adopted; a
        # pipe closed instead means it was not.
        from oloproof_core.execution.isolation._child import (
            prepare_model_client,
            serve_from_setup,
        )

        with contextlib.suppress(Exception):  # its warm-up does it again, and says why
            prepare_model_client()  # the model client's import, while the parent plans
        setup = _read_setup(read_fd)
        if setup is not None:
            return serve_from_setup(setup, read_fd, write_fd)
    return 0


def _declared(declare: Any, request: Mapping[str, Any], entry: Any) -> dict[str, Any] | None:
    if entry is None:
        return None
    try:
        return {"declared": declare(request, entry)}
    except OloproofError as exc:
        return {"error": str(exc)}
    except SystemExit as exc:
        at = _where(exc).rpartition("SystemExit")[0]
        return {"error": f"{at}the code called sys.exit({exc.code!r}) while it was imported"}
    except BaseException as exc:  # whatever the user's code raised, said in its words
        return {"error": _where(exc)}


def _system(request: Mapping[str, Any], reference: str) -> dict[str, Any]:
    from oloproof_core.execution.isolation._by_value import how_system_travels
    from oloproof_core.execution.systems import as_system

    module_part = reference.partition(":")[0]
    try:
        if module_part:  # imported first on its own: its failure is the module's, said so
            load_module(
                module_part, base_dir=request["base"], what="system", roots=request["roots"]
            )
    except OloproofError as exc:
        if exc.__context__ is None:  # the reference itself is wrong: no code ran
            raise
        where = "in the sandbox" if request["sandboxed"] else "in a process of its own"
        raise OloproofError(
            f"your system's module ({reference}) could not be loaded {where}: {exc}. It was "
            "imported there afresh, from the same Python environment, read-only, and was "
            "not run anywhere else."
        ) from None
    found = load_object(reference, base_dir=request["base"], what="system", roots=request["roots"])
    system = as_system(found)
    travels_as, value = how_system_travels(system, "auto")
    return {
        "name": system.name,
        "version": system.version,
        "components": dict(system.components),
        "is_async": system.is_async,
        "import_path": system.import_path,
        "reference": None if travels_as is None else travels_as.to_dict(),
        "value": value,
        "dspy_program": callable(getattr(found, "named_predictors", None)),
        "loads_models": loads_models(),
    }


def _evaluator(request: Mapping[str, Any], entry: Mapping[str, Any]) -> dict[str, Any]:
    if "content" in entry:
        return _metric_file(entry)
    from oloproof_core.judging.contained._travel import pack
    from oloproof_core.judging.evaluators import Evaluator

    found = load_object(
        entry["reference"], base_dir=request["base"], what="evaluator", roots=request["roots"]
    )
    if not isinstance(found, Evaluator):
        return {"not_an_evaluator": type(found).__name__}
    packed = pack(found)
    return {
        "described": found.describe(),
        "sub_score_range": list(found.sub_score_range),
        "io_bound": bool(found.io_bound),
        "is_async": bool(found.is_async),
        "range_hint": found.range_hint(),
        "pickled": base64.b64encode(packed.pickled).decode("ascii"),
        "files": [list(item) for item in packed.files],
        "folders": list(packed.folders),
    }


def _metric_file(entry: Mapping[str, Any]) -> dict[str, Any]:
    from oloproof_core.judging.evaluators._metric_loading import load, loaded_declaration

    return loaded_declaration(load(entry["path"], base64.b64decode(entry["content"])))


if __name__ == "__main__":
    from oloproof_core._util.process_exit import end_process

    end_process(main(sys.argv))
