"""People's labels of judged cases: what they key on, which cases to ask for, what they change.

A model-judged metric's interval covers the judge's verdicts. With labels from the
review queue's random draws it covers the truth instead (`labelled_estimate`,
`labelled_difference`), and `calibrate` says how far the judge agrees with people.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof_core._util.names_on_first_use import names_on_first_use

if TYPE_CHECKING:
    from ._calibration import Calibration, calibrate, judge_against_people, person_against_person
    from ._key import is_model_judged, label_key, model_judged_criteria
    from ._labelled import LabelledEstimate, labelled_difference, labelled_estimate
    from ._metric_labels import MetricLabels
    from ._of_result import judge_calibration, labelled_change, labelled_figure, people_agreement
    from ._sampling import Draw, draw_cases, review_draws, sampling_probabilities

_EXPORTS: dict[str, str] = {
    "Calibration": "._calibration",
    "calibrate": "._calibration",
    "judge_against_people": "._calibration",
    "person_against_person": "._calibration",
    "Draw": "._sampling",
    "draw_cases": "._sampling",
    "is_model_judged": "._key",
    "label_key": "._key",
    "model_judged_criteria": "._key",
    "LabelledEstimate": "._labelled",
    "labelled_difference": "._labelled",
    "labelled_estimate": "._labelled",
    "sampling_probabilities": "._sampling",
    "MetricLabels": "._metric_labels",
    "judge_calibration": "._of_result",
    "labelled_change": "._of_result",
    "labelled_figure": "._of_result",
    "people_agreement": "._of_result",
    "review_draws": "._sampling",
}

__all__ = [
    "Calibration",
    "Draw",
    "LabelledEstimate",
    "MetricLabels",
    "calibrate",
    "draw_cases",
    "is_model_judged",
    "judge_against_people",
    "judge_calibration",
    "label_key",
    "labelled_change",
    "labelled_difference",
    "labelled_estimate",
    "labelled_figure",
    "model_judged_criteria",
    "people_agreement",
    "person_against_person",
    "review_draws",
    "sampling_probabilities",
]

__getattr__ = names_on_first_use(__name__, _EXPORTS, globals())
