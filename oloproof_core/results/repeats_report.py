"""The report's lines for a run whose cases ran several times (`provenance["repeats"]`)."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any


def repeat_lines(provenance: Mapping[str, Any]) -> list[str]:
    """pass@k, pass^k and the stable and flaky cases of each pass/fail metric."""
    figures = provenance.get("repeats")
    if not isinstance(figures, Mapping):
        return []
    lines = [
        "",
        f"repeats: each of {figures.get('cases')} cases ran {figures.get('repeats')} times; "
        "the metrics above are the mean over cases of each case's mean (a case is a cluster)",
    ]
    auto = figures.get("auto")
    if isinstance(auto, Mapping):
        return ["", *auto_lines(figures, auto)]
    for metric in figures.get("metrics") or []:
        k = metric.get("k")
        lines.append(
            f"    {metric.get('metric')}: pass@{k} {_figure(metric.get('pass_at_k'))}, "
            f"pass^{k} {_figure(metric.get('pass_all_k'))}"
        )
        lines.append(f"      {_counts(metric)}")
    return lines


def auto_lines(figures: Mapping[str, Any], auto: Mapping[str, Any]) -> list[str]:
    """How `repeats: auto` spent its calls, and each metric's stable and flaky cases."""
    most, cases = auto.get("most"), figures.get("cases")
    read = auto.get("evidence_runs") or 0
    where = (
        f"from {read} earlier run{'s' if read != 1 else ''} of these cases"
        if read
        else "no earlier run of these cases: every case ran the most times"
    )
    lines = [
        f"repeats: auto ({where}): {auto.get('cases_most')} of {cases} cases ran {most} "
        f"times, {auto.get('cases_once')} stable ones once; {auto.get('calls')} calls "
        f"where {most} for every case would make {auto.get('uniform_calls')}",
        "the metrics above are the mean over cases of each case's mean, each case weighed "
        "once; pass@k needs k tries of every case and is not reported",
    ]
    for metric in figures.get("metrics") or []:
        once = metric.get("tried_once") or 0
        lines.append(
            f"    {metric.get('metric')}: {_counts(metric)}"
            + (f"; {once} tried once" if once else "")
        )
    return lines


def repeat_html(provenance: Mapping[str, Any]) -> str:
    lines = repeat_lines(provenance)
    return "".join(f"<p>{html.escape(line.strip())}</p>" for line in lines if line)


def _figure(figure: Any) -> str:
    if not isinstance(figure, Mapping):
        return "—"
    estimate = figure.get("estimate")
    shown = "—" if estimate is None else f"{estimate:.3f}"
    missing = f", {figure['n_missing']} cases missing" if figure.get("n_missing") else ""
    return f"{shown} [{figure.get('lower', 0):.3f}, {figure.get('upper', 1):.3f}]{missing}"


def _counts(metric: Mapping[str, Any]) -> str:
    named = ", ".join(metric.get("flaky_cases") or [])
    more = " …" if metric.get("flaky", 0) > len(metric.get("flaky_cases") or []) else ""
    incomplete = metric.get("incomplete") or 0
    return (
        f"{metric.get('stable_pass')} stable pass, {metric.get('stable_fail')} stable fail, "
        f"{metric.get('flaky')} flaky"
        + (f" ({named}{more})" if named else "")
        + (f", {incomplete} with a repeat missing" if incomplete else "")
    )
