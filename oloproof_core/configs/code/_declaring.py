"""A run config's system and user evaluators, declared by the probe in their sandbox.

`declare_config_code` sends the probe the system's reference and the evaluator entries
that are user code (`module:name`, a metric file with the bytes read here), and turns
its reply into stand-ins: a `DeclaredSystem`, `DeclaredEvaluator`s, and `MetricFile`s
made from their declarations. Each failure is the item's own ConfigError, in the words
the config's loader uses.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from oloproof_core.configs.code._probe import first_process_reply, probe, start_first_process
from oloproof_core.configs.code._stand_ins import DeclaredEvaluator, DeclaredSystem
from oloproof_core.errors import ConfigError, OloproofError
from oloproof_core.execution.isolation import DEFAULT_MEMORY_LIMIT_MB
from oloproof_core.execution.isolation._first_process import FirstProcess
from oloproof_core.execution.isolation._reference import find_afresh
from oloproof_core.judging.evaluators import Evaluator, MetricFile
from oloproof_core.judging.evaluators._metric_file import default_criterion
from oloproof_core.judging.evaluators._metric_loading import read_metric_file


@dataclass(frozen=True, slots=True)
class ProbeSettings:
    """Where and how the probe runs: as the run's system will."""

    base: str
    roots: Sequence[str] | None
    sandbox: str
    hidden: Sequence[str] = ()
    memory_limit_mb: int | None = None


@dataclass(slots=True)
class DeclaredCode:
    """The probe's answers: each item loaded, or its error (a ConfigError's message)."""

    system: DeclaredSystem | None = None
    system_error: str | None = None
    evaluators: dict[int, Evaluator | str] = field(default_factory=dict)


def declare_config_code(
    settings: ProbeSettings,
    *,
    system: str | None,
    evaluators: Mapping[int, str],
    first_process: bool = False,
) -> DeclaredCode:
    """The stand-ins for `system` (a reference) and `evaluators` (entry by index).

    `first_process`: the system is declared alone, by a process its run's pool may adopt
    (`isolation._first_process`), beside the evaluators' probe; the `DeclaredSystem`
    holds it. Otherwise one probe declares everything and ends."""
    declared = DeclaredCode()
    entries: list[dict[str, Any]] = []
    for index, entry in evaluators.items():
        try:
            entries.append({"index": index, **_entry(settings.base, entry)})
        except OloproofError as exc:
            declared.evaluators[index] = str(exc)
    folders = [settings.base, *(os.path.dirname(e["path"]) for e in entries if "path" in e)]
    module_part = (system or "").partition(":")[0]
    system_folders = [settings.base]
    if module_part.endswith(".py"):  # a file beside the config, or elsewhere (`../bot.py`)
        system_folders.append(
            os.path.dirname(os.path.abspath(os.path.join(settings.base, module_part)))
        )
    first = _start_first(settings, system, system_folders) if first_process and system else None
    if first is not None:
        system = None  # declared by the first process, alone
    folders += system_folders[1:]
    if system is not None or entries:
        try:
            reply = _probe(settings, system, entries, folders)
        except ConfigError as exc:
            failed = {"error": str(exc)}
            reply = {"system": failed, "evaluators": [failed] * len(entries)}
    else:
        reply = {"evaluators": []}
    if first is not None:
        reply["system"] = _first_reply(first)
    _read_system(declared, reply.get("system"), first)
    answers = reply.get("evaluators")
    if not isinstance(answers, list) or len(answers) != len(entries):
        answers = [{"error": "the probe's reply is malformed"}] * len(entries)
    for item, answer in zip(entries, answers, strict=True):
        declared.evaluators[item["index"]] = _evaluator(settings, item, answer, folders)
    return declared


def _start_first(settings: ProbeSettings, system: str, folders: list[str]) -> FirstProcess:
    first = FirstProcess(
        mode=settings.sandbox,
        hidden=settings.hidden,
        memory_limit_mb=settings.memory_limit_mb or DEFAULT_MEMORY_LIMIT_MB,
    )
    try:
        shown = _first_folders(system, folders)
        start_first_process(_request(settings, system, []), first, folders=shown)
    except BaseException:
        first.close()
        raise
    return first


def _first_folders(system: str, folders: list[str]) -> list[str]:
    """The folders the system's first process is shown beyond this process's own path.

    The config's folder (`folders[0]`) only when the system's top-level module is not
    found without it: one found on the path anyway is imported from there, and a pool's
    process is shown the path alone, so a first process shown the config's folder too
    would see more than the pool's and could not be adopted (its pool would start
    another). Found as a fresh interpreter's finders would find it, running nothing."""
    module = system.partition(":")[0]
    if module.endswith(".py"):  # loaded by its path; its own folder is shown
        return folders[1:]
    if find_afresh(module.partition(".")[0]) is not None:
        return folders[1:]
    return folders


def _first_reply(first: FirstProcess) -> dict[str, Any]:
    try:
        reply = first_process_reply(first)
    except ConfigError as exc:
        return {"error": str(exc)}
    answer = reply.get("system")
    if not isinstance(answer, dict) or "declared" not in answer:
        first.close()  # it declared nothing, so it serves nothing
    elif isinstance(answer["declared"], dict) and answer["declared"].get("loads_models") is True:
        first.expect_model_calls()
    return answer if isinstance(answer, dict) else {"error": "the probe's reply is malformed"}


def _probe(
    settings: ProbeSettings, system: str | None, entries: list[dict[str, Any]], folders: Any
) -> dict[str, Any]:
    return probe(
        _request(settings, system, entries),
        sandbox=settings.sandbox,
        hidden=settings.hidden,
        folders=list(dict.fromkeys(folders)),
        memory_limit_mb=settings.memory_limit_mb,
    )


def _request(
    settings: ProbeSettings, system: str | None, entries: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "base": settings.base,
        "roots": None if settings.roots is None else list(settings.roots),
        "system": system,
        "evaluators": [{k: v for k, v in e.items() if k != "index"} for e in entries],
    }


def _entry(base: str, entry: str) -> dict[str, Any]:
    if ":" in entry:
        return {"reference": entry}
    path = os.path.abspath(os.path.join(base, entry))
    content = read_metric_file(path)
    return {
        "path": path,
        "content": base64.b64encode(content).decode("ascii"),
        "criterion": default_criterion(path),
    }


def _read_system(declared: DeclaredCode, answer: Any, first: FirstProcess | None) -> None:
    if not isinstance(answer, dict):
        return
    if "declared" in answer:
        try:
            declared.system = DeclaredSystem(answer["declared"], first_process=first)
        except OloproofError as exc:
            if first is not None:
                first.close()
            declared.system_error = str(exc)
    else:
        declared.system_error = str(answer.get("error", "the probe's reply is malformed"))


def _evaluator(
    settings: ProbeSettings, item: Mapping[str, Any], answer: Any, folders: Sequence[str]
) -> Evaluator | str:
    if not isinstance(answer, dict) or "declared" not in answer:
        return str(answer.get("error") if isinstance(answer, dict) else "no answer")
    declaration = answer["declared"]
    try:
        if "path" in item:
            return _metric_file(settings, item, declaration)
        if isinstance(declaration, dict) and "not_an_evaluator" in declaration:
            return (
                f"{item['reference']!r} is a {declaration['not_an_evaluator']}, not an "
                "evaluator; decorate it with @evaluator(criterion=...)"
            )
        return DeclaredEvaluator(declaration)
    except OloproofError as exc:
        return str(exc)


def _metric_file(settings: ProbeSettings, item: Mapping[str, Any], declaration: Any) -> MetricFile:
    path, criterion = str(item["path"]), str(item["criterion"])

    def declare_again(content: bytes) -> Mapping[str, Any]:
        """A changed file's new bytes, declared in a probe of their own (`refresh`)."""
        entry = {
            "path": path,
            "content": base64.b64encode(content).decode(),
            "criterion": criterion,
        }
        reply = _probe(settings, None, [entry], [os.path.dirname(path)])
        answer = (reply.get("evaluators") or [None])[0]
        if not isinstance(answer, dict) or "declared" not in answer:
            error = answer.get("error") if isinstance(answer, dict) else "no answer"
            raise ConfigError(f"metric file {path}: {error}")
        return answer["declared"]  # type: ignore[no-any-return]

    content = base64.b64decode(item["content"])
    return MetricFile.declared(path, content, criterion, declaration, declare_again=declare_again)
