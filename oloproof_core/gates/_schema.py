"""The release policy schema (version 1): reading and validating `release.yaml`.

Everything that can be checked without a run is checked here, with the file, the
line and the key in every message; what needs the run (do the metrics exist, are
the thresholds inside their ranges, is a baseline available) is checked when the
policy decides a run. docs/policy.md documents the schema for users.
"""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from oloproof_core.gates._errors import PolicyError
from oloproof_core.gates._measured_rules import KEYS as MEASURED_KEYS
from oloproof_core.gates._measured_rules import is_measured, measured_rule
from oloproof_core.gates._no_regression import NoRegressionRule
from oloproof_core.gates._rules import BoundRule, MissingRule, RequireRule, Rule
from oloproof_core.gates._yaml_lines import Path

SCHEMA_VERSION = 1
TOP_KEYS: dict[str, str] = {
    "version": f"schema version, must be {SCHEMA_VERSION}",
    "description": "free text shown with the policy",
    "confidence": "confidence level of the intervals, between 0 and 1 (default: the run's)",
    "baseline": "what no_regression rules compare against: {run: path.json}, "
    "{release: 'name@version'} or {last_approved: true}",
    "rules": "list of rules",
    "multiplicity": "error control across rules: holm (default) or none",
    "sequential": "true or {batch: N}: anytime-valid intervals, so cases may be added "
    "in batches until the gate decides (oloproof run --until-decided)",
    "effect": "planning effect for the cases-for-80%-power readout, as a share of each "
    "metric's range (default 0.05)",
    "on_first_release": "pass, inconclusive (default) or fail: what a no_regression rule "
    "says while its {last_approved: true} baseline does not exist yet",
}
FIRST_RELEASE = ("pass", "inconclusive", "fail")
MULTIPLICITY = ("holm", "none")
DEFAULT_BATCH = 50
DEFAULT_EFFECT = 0.05
SEQUENTIAL_KEYS = {"batch": "cases added per look, a whole number ≥ 1 (default 50)"}
RULE_KEYS: dict[str, str] = {
    "metric": "the criterion or sub-score (criterion.name) the rule applies to",
    "min": "the whole interval must be at or above this",
    "max": "the whole interval must be at or below this",
    "missing": "{max_count: N} and/or {max_rate: 0.05}: a cap on missing cases",
    "no_regression": "{margin: 0.02}: candidate − baseline must stay above −margin (paired)",
    "require": "list of metrics that must be present and observed",
    **MEASURED_KEYS,
}
BASELINE_KEYS: dict[str, str] = {
    "run": "path to a result JSON file (oloproof run --json), relative to the policy",
    "release": "a recorded release, 'name@version' (or 'version' of the same system)",
    "last_approved": "true: the last approved release of the same system",
}
MISSING_KEYS = {"max_count": "a whole number ≥ 0", "max_rate": "a share between 0 and 1"}
REGRESSION_KEYS = {"margin": "how much worse than the baseline is tolerated, > 0"}


def _allowed(keys: Mapping[str, str]) -> str:
    return "\n".join(f"  {key}: {meaning}" for key, meaning in keys.items())


@dataclass(frozen=True, slots=True)
class BaselineSpec:
    kind: str
    """'run', 'release' or 'last_approved'."""
    value: str | None
    where: str

    def describe(self) -> dict[str, Any]:
        return {self.kind: True if self.value is None else self.value}

    def looked_up(self, own_name: str) -> tuple[str, str | None]:
        """The system and version a store looks up for a run of `own_name`: the version
        named (`release`), or None for the last approved run (`last_approved`)."""
        if self.kind == "last_approved":
            return own_name, None
        value = self.value or ""
        if "@" in value:
            name, _, version = value.rpartition("@")
            return name, version
        return own_name, value


@dataclass(frozen=True, slots=True)
class PolicySpec:
    rules: tuple[Rule, ...]
    confidence: float | None
    baseline: BaselineSpec | None
    description: str | None
    multiplicity: str = "holm"
    batch: int | None = None
    """Cases per look when the policy is sequential; None for a fixed-size gate."""
    effect: float = DEFAULT_EFFECT
    on_first_release: str = "inconclusive"
    """What a no_regression rule says while no `last_approved` baseline exists yet."""


class _Where:
    """Turns a path inside the policy into `file:line: key` for messages."""

    def __init__(self, source: str, lines: Mapping[Path, int]) -> None:
        self.source = source
        self.lines = lines

    def __call__(self, path: Path) -> str:
        line = None
        for cut in range(len(path), -1, -1):
            line = self.lines.get(path[:cut])
            if line is not None:
                break
        at = f"{self.source}:{line}" if line is not None else self.source
        key = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path)
        return f"{at}: {key.lstrip('.')}" if key else at


def parse_policy(
    data: Any, source: str, lines: Mapping[Path, int], base_dir: str | None
) -> PolicySpec:
    where = _Where(source, lines)
    if not isinstance(data, Mapping):
        raise PolicyError(f"{where(())}: a policy is a mapping with keys:\n{_allowed(TOP_KEYS)}")
    _no_unknown_keys(data, TOP_KEYS, (), where)
    if "version" not in data:
        raise PolicyError(
            f"{where(())}: missing 'version: {SCHEMA_VERSION}' (the schema "
            "version, so that later versions can change the format safely)"
        )
    version = data["version"]
    if isinstance(version, bool) or version != SCHEMA_VERSION:
        raise PolicyError(
            f"{where(('version',))}: unsupported version {version!r}; this "
            f"oloproof reads policy version {SCHEMA_VERSION}"
        )
    description = data.get("description")
    if description is not None and not isinstance(description, str):
        raise PolicyError(f"{where(('description',))}: must be text")
    confidence = _confidence(data.get("confidence"), where)
    baseline = None
    if data.get("baseline") is not None:
        baseline = _baseline(data["baseline"], where, base_dir)
    raw_rules = data.get("rules")
    if not isinstance(raw_rules, list) or not raw_rules:
        raise PolicyError(
            f"{where(('rules',))}: 'rules' must be a non-empty list, e.g.\n"
            "  rules:\n    - metric: exact_label\n      min: 0.9\n"
            "    - missing: {max_count: 0}"
        )
    rules: list[Rule] = []
    for index, entry in enumerate(raw_rules):
        rules.extend(_rules(entry, ("rules", index), where))
    return PolicySpec(
        rules=tuple(rules),
        confidence=confidence,
        baseline=baseline,
        description=description,
        multiplicity=_multiplicity(data.get("multiplicity", "holm"), where),
        batch=_sequential(data.get("sequential"), where),
        effect=_effect(data.get("effect", DEFAULT_EFFECT), where),
        on_first_release=_first_release(data, baseline, where),
    )


def _confidence(value: Any, where: _Where) -> float | None:
    if value is None:
        return None
    if not _is_number(value) or not 0 < value < 1:
        raise PolicyError(
            f"{where(('confidence',))}: must be between 0 and 1 (e.g. 0.95), got {value!r}"
        )
    return float(value)


def _multiplicity(value: Any, where: _Where) -> str:
    if value not in MULTIPLICITY:
        raise PolicyError(
            f"{where(('multiplicity',))}: must be one of {', '.join(MULTIPLICITY)} "
            f"(holm: a gate falsely fails at most 2.5 % of the time however many rules "
            f"it has; none: each rule on its own), got {value!r}"
        )
    return str(value)


def _sequential(value: Any, where: _Where) -> int | None:
    if value is None or value is False:
        return None
    if value is True:
        return DEFAULT_BATCH
    at = where(("sequential",))
    if not isinstance(value, Mapping):
        raise PolicyError(f"{at}: write 'sequential: true' or 'sequential: {{batch: 50}}'")
    _no_unknown_keys(value, SEQUENTIAL_KEYS, ("sequential",), where)
    batch = value.get("batch", DEFAULT_BATCH)
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise PolicyError(
            f"{where(('sequential', 'batch'))}: must be {SEQUENTIAL_KEYS['batch']}, got {batch!r}"
        )
    return batch


def _effect(value: Any, where: _Where) -> float:
    if not _is_number(value) or not 0 < value < 1:
        raise PolicyError(
            f"{where(('effect',))}: must be a share of the range between 0 and 1 "
            f"(e.g. 0.05), got {value!r}"
        )
    return float(value)


def _first_release(data: Mapping[str, Any], baseline: BaselineSpec | None, where: _Where) -> str:
    if "on_first_release" not in data:
        return "inconclusive"
    value = data["on_first_release"]
    at = where(("on_first_release",))
    if value not in FIRST_RELEASE:
        raise PolicyError(f"{at}: must be one of {', '.join(FIRST_RELEASE)}, got {value!r}")
    if baseline is None or baseline.kind != "last_approved":
        raise PolicyError(
            f"{at}: applies only to 'baseline: {{last_approved: true}}' (the one baseline "
            "that does not exist before a release is approved); remove it or use that baseline"
        )
    return str(value)


def _no_unknown_keys(
    data: Mapping[Any, Any], allowed: Mapping[str, str], path: Path, where: _Where
) -> None:
    for key in data:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise PolicyError(
                f"{where((*path, str(key)))}: unknown key {key!r}{hint}; allowed keys:"
                f"\n{_allowed(allowed)}"
            )


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _baseline(data: Any, where: _Where, base_dir: str | None) -> BaselineSpec:
    path: Path = ("baseline",)
    if not isinstance(data, Mapping) or len(data) != 1:
        raise PolicyError(
            f"{where(path)}: 'baseline' is a mapping with exactly one of:\n"
            f"{_allowed(BASELINE_KEYS)}"
        )
    _no_unknown_keys(data, BASELINE_KEYS, path, where)
    ((kind, value),) = data.items()
    at = where((*path, kind))
    if kind == "last_approved":
        if value is not True:
            raise PolicyError(f"{at}: write 'last_approved: true' (got {value!r})")
        return BaselineSpec("last_approved", None, at)
    if not isinstance(value, str) or not value.strip():
        raise PolicyError(f"{at}: must be text: {BASELINE_KEYS[kind]}")
    if kind == "run" and base_dir is not None and not os.path.isabs(value):
        value = os.path.join(base_dir, value)
    return BaselineSpec(kind, value, at)


def _rules(entry: Any, path: Path, where: _Where) -> list[Rule]:
    if not isinstance(entry, Mapping):
        raise PolicyError(
            f"{where(path)}: each rule is a mapping, e.g. "
            "'{metric: exact_label, min: 0.9}'; allowed keys:\n"
            f"{_allowed(RULE_KEYS)}"
        )
    _no_unknown_keys(entry, RULE_KEYS, path, where)
    at = where(path)
    kinds = [key for key in ("missing", "no_regression", "require") if key in entry]
    bounds = [key for key in ("min", "max") if key in entry]
    if len(kinds) + (1 if bounds else 0) != 1:
        found = kinds + bounds
        raise PolicyError(
            f"{at}: a rule states exactly one of min/max, missing, "
            f"no_regression or require (found: {', '.join(found) or 'none'})"
        )
    metric = entry.get("metric")
    if metric is not None and (not isinstance(metric, str) or not metric):
        raise PolicyError(
            f"{where((*path, 'metric'))}: must be a metric name, e.g. exact_label"
            " or known_label.format"
        )
    if is_measured(entry):
        return [measured_rule(entry, where, path)]
    if kinds == ["require"]:
        return [_require(entry, path, where)]
    if kinds == ["missing"]:
        return [_missing(entry["missing"], metric, (*path, "missing"), where)]
    if metric is None:
        raise PolicyError(
            f"{at}: this rule needs 'metric: <name>' (which criterion or sub-score it applies to)"
        )
    if kinds == ["no_regression"]:
        return [_no_regression(entry["no_regression"], metric, (*path, "no_regression"), where)]
    rules: list[Rule] = []
    for side in bounds:
        value = entry[side]
        if not _is_number(value):
            raise PolicyError(f"{where((*path, side))}: must be a number, got {value!r}")
        if side == "min":
            rules.append(BoundRule(where(path), metric, float(value), "min"))
        else:
            rules.append(BoundRule(where(path), metric, float(value), "max"))
    if len(rules) == 2 and entry["min"] > entry["max"]:
        raise PolicyError(
            f"{at}: min {entry['min']!r} is above max {entry['max']!r}; no interval could pass"
        )
    return rules


def _require(entry: Mapping[str, Any], path: Path, where: _Where) -> RequireRule:
    if "metric" in entry:
        raise PolicyError(
            f"{where((*path, 'metric'))}: a require rule lists its metrics "
            "itself: 'require: [exact_label, known_label.format]'"
        )
    names = entry["require"]
    if isinstance(names, str):
        names = [names]
    if (
        not isinstance(names, list)
        or not names
        or not all(isinstance(name, str) and name for name in names)
    ):
        raise PolicyError(
            f"{where((*path, 'require'))}: must be a non-empty list of metric "
            "names, e.g. [exact_label, known_label.format]"
        )
    return RequireRule(where(path), tuple(names))


def _missing(caps: Any, metric: str | None, path: Path, where: _Where) -> MissingRule:
    if not isinstance(caps, Mapping) or not caps:
        raise PolicyError(
            f"{where(path)}: must be a mapping with max_count and/or max_rate, "
            "e.g. {max_count: 0}"
        )
    _no_unknown_keys(caps, MISSING_KEYS, path, where)
    max_count = caps.get("max_count")
    if max_count is not None and (
        isinstance(max_count, bool) or not isinstance(max_count, int) or max_count < 0
    ):
        raise PolicyError(
            f"{where((*path, 'max_count'))}: must be {MISSING_KEYS['max_count']}, got {max_count!r}"
        )
    max_rate = caps.get("max_rate")
    if max_rate is not None and (not _is_number(max_rate) or not 0 <= max_rate <= 1):
        raise PolicyError(
            f"{where((*path, 'max_rate'))}: must be {MISSING_KEYS['max_rate']}, got {max_rate!r}"
        )
    return MissingRule(
        where(path[:-1]), metric, max_count, None if max_rate is None else float(max_rate)
    )


def _no_regression(options: Any, metric: str, path: Path, where: _Where) -> NoRegressionRule:
    if not isinstance(options, Mapping):
        raise PolicyError(f"{where(path)}: must be a mapping such as {{margin: 0.02}}")
    _no_unknown_keys(options, REGRESSION_KEYS, path, where)
    if "margin" not in options:
        raise PolicyError(
            f"{where(path)}: needs a margin, e.g. {{margin: 0.02}}: with no margin the "
            "candidate must prove itself strictly better, and two equal releases "
            "could never pass"
        )
    margin = options["margin"]
    if not _is_number(margin) or margin < 0:
        raise PolicyError(
            f"{where((*path, 'margin'))}: must be a number > 0 (how much worse "
            f"than the baseline is tolerated), got {margin!r}"
        )
    if margin == 0:
        raise PolicyError(
            f"{where((*path, 'margin'))}: a margin of 0 can never pass for two equal "
            "releases (the interval of a zero difference always reaches below 0); "
            "state the regression you tolerate, e.g. 0.02"
        )
    return NoRegressionRule(where(path[:-1]), metric, float(margin))
