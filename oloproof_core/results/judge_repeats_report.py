"""The report's lines for a run whose model judges judged each output several times
(`provenance["judge_repeats"]`)."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any


def judge_repeat_lines(provenance: Mapping[str, Any]) -> list[str]:
    """Per repeated judge: how much of the spread within a case is the system's, the judge's."""
    figures = provenance.get("judge_repeats")
    if not isinstance(figures, Mapping):
        return []
    lines = [
        "",
        f"judge repeats: each output judged {figures.get('judge_repeats')} times by each model "
        "judge, its score the mean (other evaluators judge once)",
    ]
    metrics = figures.get("metrics") or []
    if not metrics:
        lines.append("    no evaluator of this run is a model judge: nothing was judged again")
    for metric in metrics:
        lines.append(f"    {metric.get('metric')}: {_split(metric)}")
    return lines


def judge_repeat_html(provenance: Mapping[str, Any]) -> str:
    lines = judge_repeat_lines(provenance)
    return "".join(f"<p>{html.escape(line.strip())}</p>" for line in lines if line)


def _split(metric: Mapping[str, Any]) -> str:
    judge, system = metric.get("judge_variance"), metric.get("system_variance")
    if judge is None:
        return "no output has two verdicts: the judge's variance is unknown"
    if system is None:
        return f"judge variance {judge:.4f} (run with repeats to tell the system's apart)"
    if metric.get("judge_share") is None:
        return "no variance within a case: every output of a case was judged alike"
    return (
        f"of the variance within a case, {100 * metric['system_share']:.0f} % from the "
        f"system's repeats, {100 * metric['judge_share']:.0f} % from the judge "
        f"(variance {system:.4f} and {judge:.4f})"
    )
