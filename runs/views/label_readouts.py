"""What the metric page and the run page show of people's labels: the combined interval
beside the judge's own, calibration figures as rows, labels needed for a width."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.urls import reverse

import oloproof_core.labels as labels_engine
from metrics.models import Evaluator, MetricEstimate
from metrics.selectors import run_metric_estimates
from runs.access import Actor
from runs.errors import DomainError, NotFoundError
from runs.models import Run
from runs.selectors.labels import CaseLabels, ReviewQueue, labelled_metric, metric_labels

FIGURE_NAMES = {
    "agreement": ("agreement", "share of cases where both said the same"),
    "kappa": ("Cohen's kappa", "agreement beyond chance"),
    "false_pass_rate": ("false-pass rate", "judge passed, people failed"),
    "false_fail_rate": ("false-fail rate", "judge failed, people passed"),
    "correlation": ("correlation", ""),
    "mean_abs_difference": ("mean absolute difference", ""),
}
"""Calibration figures in the order they are shown, with their names in words."""


@dataclass(frozen=True, slots=True)
class FigureRow:
    key: str
    name: str
    help: str
    value: float | None
    lower: float | None
    upper: float | None
    n: int | None


@dataclass(frozen=True, slots=True)
class RunLabelFigure:
    """The run page's word on one model-judged metric: the combined interval, or none yet."""

    labelled: Any
    """The engine's LabelledEstimate, or None when no drawn case is labelled."""


def estimate_is_model_judged(item: MetricEstimate, evaluator: Evaluator | None) -> bool:
    if evaluator is None:
        return False
    return bool(labels_engine.is_model_judged(evaluator.kind, evaluator.parameters))


def figure_rows(calibration: Any) -> list[FigureRow]:
    """The calibration's figures as table rows, in a fixed order; none without figures."""
    if calibration is None or not calibration.n:
        return []
    figures = getattr(calibration, "figures", {}) or {}
    rows = []
    for key, (name, help_text) in FIGURE_NAMES.items():
        figure = figures.get(key)
        if figure is None:
            continue
        interval = figure.interval
        rows.append(
            FigureRow(
                key=key,
                name=name,
                help=help_text,
                value=figure.value,
                lower=None if interval is None else interval.lower,
                upper=None if interval is None else interval.upper,
                n=figure.n,
            )
        )
    return rows


def interval_width(labelled: Any) -> float | None:
    if labelled is None:
        return None
    return float(labelled.interval.upper - labelled.interval.lower)


def width_asked(text: str | None) -> tuple[float | None, str]:
    """The `width` field read as a positive number, or the reason it cannot be."""
    if not text:
        return None, ""
    try:
        width = float(text)
    except ValueError:
        width = math.nan
    if not math.isfinite(width) or width <= 0:
        return None, f"The width must be a positive number such as 0.1; {text!r} is not."
    return width, ""


def width_answer(labelled: Any, width: float | None) -> str:
    """How many more labelled draws bring the combined interval to `width`, in words."""
    if width is None:
        return ""
    if labelled is None:
        return (
            "Label the first drawn case: how many more labels a width takes is worked "
            "out from the labels there are."
        )
    current = interval_width(labelled) or 0.0
    if labelled.known:
        return known_words(labelled)
    needed = labelled.labels_needed(width)
    if needed == 0:
        return f"The combined interval is {current:.3g} wide already, within {width:g}."
    if needed is None:
        return (
            f"Labels alone cannot bring the interval to {width:g}: the rest of its "
            f"{current:.3g} comes from the cases' own spread and the missing cases."
        )
    left = labelled.cases_left
    return (
        f"About {needed} more labelled draw{'s' if needed != 1 else ''} bring the "
        f"combined interval from {current:.3g} to a width of {width:g} "
        f"({left} case{'s' if left != 1 else ''} left to label)."
    )


def known_words(labelled: Any) -> str:
    """What a figure from labels of every case is: the people's, with nothing to narrow."""
    missing = labelled.n_missing
    if missing:
        cases = "case keeps" if missing == 1 else "cases keep"
        return (
            f"People labelled every case the judge scored ({labelled.n_labels}): the figure is "
            f"theirs, exact; only the {missing} missing {cases} an interval open, and no "
            "label can narrow it."
        )
    return (
        f"People labelled all {labelled.n_labels} cases: the figure is theirs, exact, not "
        "an estimate; no interval is left to narrow."
    )


def run_label_figures(
    *, user: Actor, run: Run, estimates: Sequence[MetricEstimate]
) -> dict[str, RunLabelFigure]:
    """Per model-judged criterion of the run page, its combined interval (or None)."""
    ids = {item.evaluator_id for item in estimates if item.evaluator_id is not None}
    evaluators = Evaluator.objects.in_bulk(ids) if ids else {}
    figures = {}
    for item in estimates:
        if not estimate_is_model_judged(item, evaluators.get(item.evaluator_id or 0)):
            continue
        labelled = None
        # People label a criterion, never one of its sub-scores; a run that has not read
        # its dataset has nothing labelled.
        with contextlib.suppress(DomainError):
            if not item.is_sub_score:
                labelled = labelled_metric(run_id=run.pk, criterion=item.criterion, user=user)
        figures[item.metric] = RunLabelFigure(labelled=labelled)
    return figures


def metric_page_readouts(*, user: Actor, run: Run, metric: str, width_text: str) -> dict[str, Any]:
    """The metric page: the judge's figure, the combined one, calibration, labels needed."""
    item = run_metric_estimates(run_id=run.pk).select_related("evaluator").filter(metric=metric)
    found = item.first()
    if found is None:
        raise NotFoundError(f"run {run.pk} has no metric {metric!r}")
    context: dict[str, Any] = {
        "item": found,
        "model_judged": estimate_is_model_judged(found, found.evaluator),
        "labels_apply": not found.is_sub_score,
        "labelled": None,
        "width_text": width_text,
        "confidence_percent": f"{100 * found.confidence:g}",
    }
    if found.is_sub_score:
        return context
    labels = metric_labels(user=user, run_id=run.pk, criterion=found.criterion)
    labelled = labels.labelled
    half = labels.default_width()
    if not width_text and half is not None and half > 0:
        width_text = f"{half:.3g}"  # unless asked, what halving the interval takes
    width, width_error = width_asked(width_text)
    return {
        **context,
        "width_text": width_text,
        "labelled": labelled,
        "labelled_width": interval_width(labelled),
        "labelled_cases": labels.labelled_cases,
        "calibration": labels.calibration,
        "calibration_rows": figure_rows(labels.calibration),
        "people": labels.people,
        "people_rows": figure_rows(labels.people),
        "width_error": width_error,
        "width_answer": width_answer(labelled, width),
        "known_words": known_words(labelled) if labelled is not None and labelled.known else "",
        "next_case": labels.next_case,
        **labelled_case_rows(labels.cases),
    }


LABELLED_CASES_SHOWN = 100


def labelled_case_rows(labelled: list[CaseLabels]) -> dict[str, Any]:
    """The labelled cases, those people disagree on first, then those the judge does."""
    cases = sorted(labelled, key=lambda case: (not case.people_disagree, not case.judge_disagrees))
    return {
        "labelled_rows": cases[:LABELLED_CASES_SHOWN],
        "labelled_total": len(cases),
        "people_disagree_count": sum(case.people_disagree for case in cases),
        "judge_disagrees_count": sum(case.judge_disagrees for case in cases),
    }


def position_before(text: str | None, *, minus: int = 0) -> int | None:
    """A draw position from a query or form field (less `minus`); None if there is none."""
    if not text or not text.isascii() or not text.isdecimal() or len(text) > 9:
        return None
    position = int(text) - minus
    return position if position >= 0 else None


def _queue_url(queue: ReviewQueue, **query: str | int | None) -> str:
    url = reverse("runs:review", args=[queue.run.pk, queue.metric.criterion])
    given = {name: value for name, value in query.items() if value is not None}
    return url + (f"?{urlencode(given)}" if given else "")


def _judge_reading(queue: ReviewQueue) -> str | None:
    """ "pass" or "fail" for a pass/fail judge's verdict, None for a score or no verdict."""
    if queue.metric.value_type != "pass_fail" or queue.judge_value is None:
        return None
    low, high = queue.metric.score_range
    return "pass" if queue.judge_value >= (low + high) / 2.0 else "fail"


def queue_readouts(*, queue: ReviewQueue, blind: bool, after: int | None) -> dict[str, Any]:
    """The review page's figures and links around the selector's queue."""
    low, high = queue.metric.score_range
    blind_flag = "1" if blind else None
    if queue.case_id is not None:
        empty_reason = ""
    elif after is not None:
        empty_reason = f"No unlabelled draw comes after draw {after}."
    else:
        empty_reason = (
            "Every case the judge has a verdict on is labelled: no draw is left, and the "
            "figure is the people's."
        )
    return {
        "queue": queue,
        "item": queue.metric.estimate,
        "blind": blind,
        "after": after,
        "score_low": low,
        "score_high": high,
        "current_width": interval_width(queue.estimate),
        "judge_reading": _judge_reading(queue),
        "blind_url": _queue_url(queue, blind="1", after=after),
        "show_judge_url": _queue_url(queue, after=after),
        "skip_url": _queue_url(queue, blind=blind_flag, after=queue.position),
        "restart_url": _queue_url(queue, blind=blind_flag),
        "empty_reason": empty_reason,
        "known_words": known_words(queue.estimate) if queue.known else "",
    }
