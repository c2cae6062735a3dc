"""A recorded gate's rules in plain sentences, with the figures each one rests on.

The engine stores every rule's outcome with its figures (`Gate.rules`). The run page
reads them back here: one sentence per rule saying what it asks, what the run showed
and so what it concluded, and one row of figures (estimate, interval, threshold,
cases used, missing). The sentences are written from the figures rather than copied
from the stored reason, so runs recorded by older versions read the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from oloproof_core.gates import planned_readout

CONCLUSION = {
    "pass": "so this rule passes",
    "fail": "so this rule fails",
    "inconclusive": "so this rule cannot be decided yet",
}


@dataclass(frozen=True, slots=True)
class RuleReadout:
    """One gate rule for reading: its sentence and the figures behind it."""

    label: str
    outcome: str
    sentence: str
    estimate: str = "—"
    interval: str = "—"
    threshold: str = "—"
    cases_used: str = "—"
    missing: str = "—"
    warning: str = ""
    more: str = ""


@dataclass(frozen=True, slots=True)
class MetricFacts:
    """What a sentence needs to know about a metric besides the rule's own figures."""

    value_type: str
    warning: str = ""


def gate_rules_explained(
    *, rules: Sequence[Mapping[str, Any]], confidence: float, metrics: Mapping[str, MetricFacts]
) -> list[RuleReadout]:
    """Each stored rule outcome of a gate as a `RuleReadout`, in the policy's order."""
    level = f"{100 * confidence:.3g} %"
    readouts = []
    for rule in rules:
        figures = rule.get("figures") or {}
        facts = metrics.get(str(rule.get("metric") or ""))
        kind = rule.get("kind")
        if kind == "bound":
            readout = _bound(rule, figures, level, facts)
        elif kind == "no_regression":
            readout = _no_regression(rule, figures, level, facts)
        elif kind == "missing":
            readout = _missing(rule, figures)
        elif kind == "require":
            readout = _require(rule, figures)
        else:
            readout = RuleReadout(
                str(rule.get("rule", "")), _outcome(rule), str(rule.get("reason"))
            )
        readouts.append(readout)
    return readouts


def _outcome(rule: Mapping[str, Any]) -> str:
    return str(rule.get("outcome") or "inconclusive")


def _number(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "—"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _signed(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "—"
    return f"{value:+.3f}".replace("-", "−")


def _share(value: float) -> str:
    return f"{100 * value:.3g} %"


def _bound_demand(metric: str, side: str, threshold: float, facts: MetricFacts | None) -> str:
    """What a min/max rule asks, in words: a share of passing cases, or an average score."""
    at = "At least" if side == "min" else "At most"
    if facts is not None and facts.value_type == "pass_fail":
        return f"{at} {_share(threshold)} of cases must pass {metric}"
    least = "at least" if side == "min" else "at most"
    return f"{metric} must average {least} {threshold:g}"


def _bound(
    rule: Mapping[str, Any], figures: Mapping[str, Any], level: str, facts: MetricFacts | None
) -> RuleReadout:
    metric = str(rule.get("metric") or "")
    side = str(figures.get("side") or "min")
    threshold = float(figures.get("threshold") or 0.0)
    lower, upper = figures.get("lower"), figures.get("upper")
    outcome = _outcome(rule)
    near, far = ("lower", "upper") if side == "min" else ("upper", "lower")
    near_value, far_value = (lower, upper) if side == "min" else (upper, lower)
    n_missing = int(figures.get("n_missing") or 0)
    widened = f" ({n_missing} missing cases widen it)" if n_missing else ""
    if outcome == "pass":
        finding = f"the {near} end of the {level} interval is {_number(near_value)}{widened}"
    elif outcome == "fail" and not figures.get("fails_alone"):
        beyond = "below" if side == "min" else "above"
        finding = (
            f"the {far} end of the {level} interval is {_number(far_value)}, "
            f"{beyond} {threshold:g}{widened}"
        )
    else:
        finding = _straddle(lower, upper, threshold, level, widened, figures)
    return RuleReadout(
        label=str(rule.get("rule", "")),
        outcome=outcome,
        sentence=f"{_bound_demand(metric, side, threshold, facts)}: {finding}, "
        f"{CONCLUSION.get(outcome, CONCLUSION['inconclusive'])}.",
        estimate=_number(figures.get("estimate")),
        interval=f"[{_number(lower)}, {_number(upper)}]",
        threshold=f"{'≥' if side == 'min' else '≤'} {threshold:g}",
        cases_used=_number(figures.get("n_observed")),
        missing=str(n_missing),
        warning="" if facts is None else facts.warning,
        more=_more_cases(rule.get("more_cases")),
    )


def _straddle(
    lower: Any, upper: Any, threshold: float, level: str, widened: str, figures: Mapping[str, Any]
) -> str:
    span = f"the {level} interval runs from {_number(lower)} to {_number(upper)}"
    if figures.get("fails_alone"):
        return (
            f"{span}{widened}, which misses {threshold:g} on its own, but not at the stricter "
            "level Holm's procedure sets for a gate with several interval rules; more cases "
            "are needed to confirm the failure"
        )
    return f"{span}{widened} and contains {threshold:g}"


def _no_regression(
    rule: Mapping[str, Any], figures: Mapping[str, Any], level: str, facts: MetricFacts | None
) -> RuleReadout:
    if figures.get("first_release"):
        return _first_release(rule, figures)
    metric = str(rule.get("metric") or "")
    margin = float(figures.get("margin") or 0.0)
    lower, upper = figures.get("lower"), figures.get("upper")
    outcome = _outcome(rule)
    baseline = figures.get("baseline")
    against = f"the baseline ({baseline})" if baseline else "the baseline"
    demand = f"{metric} must not fall more than {margin:g} below {against}"
    paired = f"the paired {level} interval of the difference (this run − baseline)"
    if outcome == "pass":
        finding = f"the lower end of {paired} is {_signed(lower)}"
    elif outcome == "fail" and not figures.get("fails_alone"):
        finding = f"the upper end of {paired} is {_signed(upper)}, below −{margin:g}"
    else:
        finding = _straddle(lower, upper, -margin, level, "", figures).replace(
            f"the {level} interval", paired
        )
    counts = (
        f" ({figures.get('regressed', 0)} cases regressed, {figures.get('improved', 0)} improved)"
    )
    return RuleReadout(
        label=str(rule.get("rule", "")),
        outcome=outcome,
        sentence=f"{demand}: {finding}{counts}, "
        f"{CONCLUSION.get(outcome, CONCLUSION['inconclusive'])}.",
        estimate=_signed(figures.get("difference")),
        interval=f"[{_signed(lower)}, {_signed(upper)}]",
        threshold=f"≥ −{margin:g}",
        cases_used=_number(figures.get("n_pairs")),
        missing=_number(figures.get("n_missing_pairs")),
        warning="" if facts is None else facts.warning,
        more=_more_cases(rule.get("more_cases")),
    )


FIRST_RELEASE = {
    "pass": "and the policy passes a first release on this rule (on_first_release: pass)",
    "fail": "and the policy fails a first release on this rule (on_first_release: fail)",
    "inconclusive": "so this rule cannot be decided until one is approved",
}


def _first_release(rule: Mapping[str, Any], figures: Mapping[str, Any]) -> RuleReadout:
    """A no_regression rule of a first release: no approved run to compare with yet."""
    metric = str(rule.get("metric") or "")
    margin = figures.get("margin")
    system = str(figures.get("system") or "") or "this system"
    outcome = _outcome(rule)
    limit = f"more than {margin:g} " if isinstance(margin, int | float) else ""
    return RuleReadout(
        label=str(rule.get("rule", "")),
        outcome=outcome,
        sentence=f"{metric} must not fall {limit}below the last approved release: there is "
        f"no approved run of {system} to compare with yet, "
        f"{FIRST_RELEASE.get(outcome, FIRST_RELEASE['inconclusive'])}.",
        threshold=f"≥ −{margin:g}" if isinstance(margin, int | float) else "—",
        more=_more_cases(rule.get("more_cases")),
    )


def _missing(rule: Mapping[str, Any], figures: Mapping[str, Any]) -> RuleReadout:
    metric = rule.get("metric")
    what = f"verdicts for {metric}" if metric else "cases"
    max_count, max_rate = figures.get("max_count"), figures.get("max_rate")
    caps, limits = [], []
    if max_count is not None:
        caps.append(f"at most {max_count} {what} may be missing")
        limits.append(f"≤ {max_count}")
    if max_rate is not None:
        caps.append(f"at most {_share(float(max_rate))} of {what} may be missing")
        limits.append(f"≤ {_share(float(max_rate))}")
    demand = " and ".join(caps) if caps else f"{what} may be missing"
    if max_count == 0 and max_rate is None:
        demand = f"no {'verdict for ' + str(metric) if metric else 'case'} may be missing"
    missing, total = int(figures.get("n_missing") or 0), int(figures.get("n_cases") or 0)
    outcome = _outcome(rule)
    verb = "is" if missing == 1 else "are"
    return RuleReadout(
        label=str(rule.get("rule", "")),
        outcome=outcome,
        sentence=f"{demand[0].upper()}{demand[1:]}: {missing} of {total} {verb} missing, "
        f"{CONCLUSION.get(outcome, CONCLUSION['inconclusive'])}.",
        threshold=" and ".join(limits) or "—",
        cases_used=str(total),
        missing=str(missing),
    )


def _require(rule: Mapping[str, Any], figures: Mapping[str, Any]) -> RuleReadout:
    label = str(rule.get("rule", ""))
    named = label.removeprefix("require ")
    absent = list(figures.get("absent") or [])
    unobserved = list(figures.get("unobserved") or [])
    outcome = _outcome(rule)
    problems = []
    if absent:
        problems.append(f"absent from the run: {', '.join(absent)}")
    if unobserved:
        problems.append(f"nothing observed for {', '.join(unobserved)}")
    finding = "; ".join(problems) if problems else "every one was observed"
    return RuleReadout(
        label=label,
        outcome=outcome,
        sentence=f"The run must report {named} with at least one observed value: "
        f"{finding}, {CONCLUSION.get(outcome, CONCLUSION['inconclusive'])}.",
    )


def _more_cases(more: Any) -> str:
    """The engine's readout for an undecided rule, as a sentence (empty when none): the
    plan's figure where the gate recorded one, else (a gate recorded before it did) the
    engine's projection."""
    if not isinstance(more, Mapping):
        return ""
    planned = planned_readout(more)
    if planned is not None:
        return planned
    count, power = more.get("count"), more.get("power_cases")
    parts = []
    if isinstance(count, int):
        parts.append(f"About {count:,} more cases behaving like these would decide it")
    elif more.get("note"):
        note = str(more["note"])
        parts.append(note[0].upper() + note[1:])
    effect = more.get("power_effect")
    if isinstance(power, int) and isinstance(effect, int | float):
        parts.append(
            f"if the truth is {effect:.3g} beyond the threshold on the passing side, "
            f"{power:,} cases in all give it an 80 % chance of passing"
        )
    return "; ".join(parts) + "." if parts else ""
