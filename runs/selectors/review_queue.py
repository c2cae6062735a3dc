"""The review queue: the next randomly drawn case of a run's metric that no one has labelled.

Cases are drawn at random, uniformly and with replacement, by a pure function of the
run's label seed and its cases (`runs.selectors.label_draws`), so labels of the draws
correct the judge's figure without bias whatever the judge's errors. The next case is
the first draw whose case has no label for this run's output; a draw on a case the
judge has no verdict for (a failed case among them) is passed over. Blind, the judge's
value and feedback are left out, so they do not sway the person labelling. Reading
the queue writes nothing: it changes no figure and no gate.

The queue's queries do not grow with the run: the run, its metric, its stored value
columns, its dataset's seed, its label keys (kept a while for a finished run), the
labels on them, the next case, and the judge's feedback on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from metrics.models import CaseVerdict
from oloproof_core.labels import Draw, LabelledEstimate
from runs.access import Actor, run_for
from runs.models import Run
from runs.selectors.label_cases import LabelledMetric, judge_column, labelled_metric_of
from runs.selectors.label_draws import (
    DrawsRead,
    combined_estimate,
    draws_read,
    labels_of_run,
    next_case,
    queue_of,
)


@dataclass(frozen=True, slots=True)
class ReviewQueue:
    """What the review page shows: the next drawn case, and where the labelling stands.

    `case_id` is None when no draw is left to label (every case the judge has a
    verdict on is labelled: the figure is then known). `judge_value` and
    `judge_feedback` are None when blind.
    """

    run: Run
    metric: LabelledMetric
    blind: bool
    case_id: str | None
    input: Any
    output: Any
    expected: Any
    judge_value: float | None
    judge_feedback: str | None
    position: int | None
    """The draw's place in the queue (0 first)."""
    probability: float | None
    """The chance each draw had of picking this case."""
    draws_labelled: int
    """Draws the combined figure uses: in order, up to the first unlabelled one (every
    labelled case once the figure is known)."""
    labels_total: int
    """People's labels of the run's outputs (two people on one case count twice)."""
    estimate: LabelledEstimate | None
    width: float | None
    """The interval width `labels_needed` is for."""
    labels_needed: int | None
    """About how many more labelled draws bring the combined interval to `width`: never
    more than the cases left to label."""

    @property
    def known(self) -> bool:
        """People labelled every case the judge scored: the figure is theirs, exact."""
        return self.estimate is not None and self.estimate.known

    @property
    def cases_left(self) -> int | None:
        """Cases the judge scored that no one has labelled (None before any figure)."""
        return None if self.estimate is None else self.estimate.cases_left

    def to_dict(self) -> dict[str, Any]:
        """The queue as the API answers it (JSON types only)."""
        return {
            "run_id": self.run.pk,
            "metric": self.metric.criterion,
            "value_type": self.metric.value_type,
            "score_range": list(self.metric.score_range),
            "blind": self.blind,
            "case_id": self.case_id,
            "input": self.input,
            "output": self.output,
            "expected": self.expected,
            "judge_value": self.judge_value,
            "judge_feedback": self.judge_feedback,
            "position": self.position,
            "probability": self.probability,
            "draws_labelled": self.draws_labelled,
            "labels_total": self.labels_total,
            "labelled": None if self.estimate is None else self.estimate.to_dict(),
            "width": self.width,
            "labels_needed": self.labels_needed,
            "known": self.known,
        }


def review_queue(
    actor: Actor,
    run_id: int,
    criterion: str,
    *,
    blind: bool = False,
    width: float | None = None,
    after: int | None = None,
) -> ReviewQueue:
    """The next unlabelled draw of `criterion` on the run (after position `after`, to skip).

    `width` defaults to half the combined interval's current width.
    """
    run = run_for(user=actor, run_id=run_id)
    metric = labelled_metric_of(run=run, criterion=criterion)
    column = judge_column(run=run, criterion=criterion)
    found = labels_of_run(run, criterion)
    read = draws_read(draws=queue_of(run, column), column=column, found=found, after=after)
    estimate = combined_estimate(metric=metric, column=column, draws=read)
    if width is None and estimate is not None and not estimate.known:
        width = estimate.interval.width / 2.0
    needed = None if estimate is None or width is None else estimate.labels_needed(width)
    return ReviewQueue(
        run=run,
        metric=metric,
        blind=blind,
        **_next_case(run, criterion, read, blind),
        draws_labelled=0 if estimate is None else estimate.n_labels,
        labels_total=read.labels_total,
        estimate=estimate,
        width=width,
        labels_needed=needed,
    )


def _next_case(run: Run, criterion: str, read: DrawsRead, blind: bool) -> dict[str, Any]:
    draw: Draw | None = read.next_draw
    case = next_case(run, read)
    if draw is None or case is None:
        return dict.fromkeys(
            (
                "case_id",
                "input",
                "output",
                "expected",
                "judge_value",
                "judge_feedback",
                "position",
                "probability",
            )
        )
    judged: tuple[float | None, str | None] = (None, None)
    if not blind:
        found = (
            CaseVerdict.objects.filter(run_id=run.pk, case_id=draw.case_id, criterion=criterion)
            .values_list("value", "feedback")
            .first()
        )
        judged = found if found is not None else (None, None)
    return {
        "case_id": draw.case_id,
        "input": case.input,
        "output": case.output,
        "expected": case.expected,
        "judge_value": judged[0],
        "judge_feedback": judged[1],
        "position": draw.position,
        "probability": draw.probability,
    }
