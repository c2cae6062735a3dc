"""What is optimized: a system's named components, or a DSPy program's instructions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from oloproof_core.errors import ConfigError, OloproofError
from oloproof_core.execution.components import check_components
from oloproof_core.execution.systems import System, as_system
from oloproof_core.optimize._candidates import MakeRelease


@dataclass(frozen=True, slots=True)
class Artifact:
    kind: str
    """"system" (components read with `component()`) or "dspy" (predictor instructions)."""
    name: str
    base_version: str | None
    seed_texts: Mapping[str, str]
    make_release: MakeRelease
    program: Any = None


def is_dspy_program(candidate: Any) -> bool:
    return callable(getattr(candidate, "named_predictors", None)) and not isinstance(
        candidate, System
    )


def artifact_from(
    system: Any,
    *,
    components: Mapping[str, str] | None,
    name: str | None = None,
    version: str | None = None,
) -> Artifact:
    """The artifact to optimize and its seed texts (the config's `components` win)."""
    if is_dspy_program(system):
        return _dspy_artifact(system, components, name, version)
    declared = as_system(system)
    texts = dict(declared.components)
    if components:
        texts.update(_checked(components))
    if not texts:
        raise ConfigError(
            f"system {declared.name!r} declares no components to optimize: declare them with "
            "@system(..., components={'system_prompt': '...'}) and read them with "
            "component('system_prompt'), or give them under `components:` in the config"
        )
    return Artifact(
        kind="system",
        name=declared.name,
        base_version=declared.version,
        seed_texts=texts,
        make_release=lambda texts, at: declared.with_components(texts, version=at),
    )


def _checked(components: Mapping[str, str]) -> dict[str, str]:
    try:
        return check_components(components, where="components")
    except OloproofError as exc:
        raise ConfigError(str(exc)) from None


def _dspy_artifact(
    program: Any, components: Mapping[str, str] | None, name: str | None, version: str | None
) -> Artifact:
    from oloproof_core.optimize._dspy_adapter import dspy_system

    texts = {
        pred_name: str(predictor.signature.instructions)
        for pred_name, predictor in program.named_predictors()
    }
    if not texts:
        raise ConfigError("the DSPy program has no predictors whose instructions to optimize")
    for key, text in (_checked(components) if components else {}).items():
        if key not in texts:
            raise ConfigError(
                f"components: the program has no predictor {key!r}; its "
                f"predictors are {', '.join(sorted(texts))}"
            )
        texts[key] = text
    label = name or type(program).__name__

    def make_release(texts: Mapping[str, str], at: str) -> System:
        import dspy

        # The model in force where the release is made, for the engine's threads too.
        return dspy_system(
            program_with(program, texts), name=label, version=at, lm=dspy.settings.lm
        )

    return Artifact(
        kind="dspy",
        name=label,
        base_version=version,
        seed_texts=texts,
        make_release=make_release,
        program=program,
    )


def program_with(program: Any, texts: Mapping[str, str]) -> Any:
    """A copy of the DSPy program whose predictors carry `texts` as their instructions."""
    copy = program.deepcopy()
    for pred_name, predictor in copy.named_predictors():
        if pred_name in texts:
            predictor.signature = predictor.signature.with_instructions(texts[pred_name])
    return copy
