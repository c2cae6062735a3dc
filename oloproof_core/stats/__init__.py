"""Confidence intervals and comparisons for evaluation results.

Pure Python and NumPy (SciPy only for rarer methods: McNemar's test, CR1, power
formulas). Each method lives in its own module, with its source cited in that
module's docstring:

- pass/fail rates: exact Clopper–Pearson (``clopper_pearson``), on a beta quantile
  computed here (``_beta_quantile``) so that a pass/fail run never imports SciPy;
- bounded scores: Waudby-Smith–Ramdas betting interval (``bounded_mean_interval``);
- missing cases bounded by their worst and best completions
  (``proportion_interval``, ``mean_interval``);
- two runs on the same cases: paired differences (``paired_proportion_difference``,
  ``paired_mean_difference``);
- cases run several times: pass@k and pass^k per case (``_pass_at_k``);
- clustered data: betting on cluster means (``clustered_*``, finite-sample valid
  with few clusters), CR1 for reference (``cr1_*``);
- the reading order of the betting methods, fixed by case ids (``_order``);
- how many more cases would settle a rule (``cases_needed``);
- cases for 80 % power at a stated effect (``_power``);
- anytime-valid intervals for cases added in batches (``running_interval``), and
  the cases they need for 80 % power, by simulation (``sequential_cases_for_power``);
- many rules or metrics at once: Holm, Benjamini–Hochberg (``_multiplicity``);
- judge verdicts combined with people's labels: prediction-powered intervals
  (``_prediction_powered``) that learn how far to lean on the judge (``_power_tuned``)
  and, for pass/fail, keep within the labels' exact interval (``_judge_or_labels``);
  agreement of raters: kappa, false-pass and false-fail rates, correlation
  (``_agreement``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof_core._util.names_on_first_use import names_on_first_use

if TYPE_CHECKING:
    from ._agreement import (
        AgreementFigure,
        correlation_figure,
        kappa_figure,
        mean_abs_difference_figure,
        proportion_figure,
    )
    from ._bounded_mean import (
        DIFFERENCE_TUNING,
        SCORE_TUNING,
        BetTuning,
        betting_p_value,
        betting_side_p_values,
        bounded_mean_bounds,
        bounded_mean_interval,
    )
    from ._clopper_pearson import clopper_pearson
    from ._cluster import cr1_mean_interval, cr1_paired_difference
    from ._cluster_betting import (
        FEW_CLUSTERS,
        ClusterGroups,
        clustered_mean_interval,
        clustered_paired_difference,
        few_clusters_warning,
    )
    from ._difference import PairedDifference
    from ._digest_order import digest_order
    from ._interval import Interval
    from ._missing import check_case_scores, completed_mean_interval, mean_interval
    from ._missing_proportion import proportion_interval
    from ._multiplicity import benjamini_hochberg, holm_rejections
    from ._order import ReadOrder
    from ._paired import mcnemar_exact_p_value, paired_mean_difference, paired_proportion_difference
    from ._pass_at_k import pass_all_k, pass_at_k
    from ._power import POWER, betting_cases_for_power, proportion_cases_for_power
    from ._prediction_powered import RectifiedMean, prediction_powered_interval
    from ._sample_size import MAX_CASES, cases_needed
    from ._sequential import case_means, running_interval, running_side_p_values
    from ._sequential_power import SequentialPlan, sequential_cases_for_power
    from ._spilled import ColumnFile, spilled_mean_interval

# Each name is imported on first use: a module that needs only a check of its inputs
# (`_validate`) or an exact interval does not load NumPy's betting methods, nor SciPy's
# (about 0.3 s) where a method needs it.
_EXPORTS: dict[str, str] = {
    "AgreementFigure": "._agreement",
    "correlation_figure": "._agreement",
    "kappa_figure": "._agreement",
    "mean_abs_difference_figure": "._agreement",
    "proportion_figure": "._agreement",
    "prediction_powered_interval": "._prediction_powered",
    "RectifiedMean": "._prediction_powered",
    "benjamini_hochberg": "._multiplicity",
    "betting_cases_for_power": "._power",
    "betting_p_value": "._bounded_mean",
    "betting_side_p_values": "._bounded_mean",
    "BetTuning": "._bounded_mean",
    "bounded_mean_bounds": "._bounded_mean",
    "bounded_mean_interval": "._bounded_mean",
    "cases_needed": "._sample_size",
    "clopper_pearson": "._clopper_pearson",
    "ClusterGroups": "._cluster_betting",
    "clustered_mean_interval": "._cluster_betting",
    "clustered_paired_difference": "._cluster_betting",
    "cr1_mean_interval": "._cluster",
    "cr1_paired_difference": "._cluster",
    "DIFFERENCE_TUNING": "._bounded_mean",
    "digest_order": "._digest_order",
    "FEW_CLUSTERS": "._cluster_betting",
    "few_clusters_warning": "._cluster_betting",
    "holm_rejections": "._multiplicity",
    "Interval": "._interval",
    "MAX_CASES": "._sample_size",
    "mcnemar_exact_p_value": "._paired",
    "mean_interval": "._missing",
    "completed_mean_interval": "._missing",
    "check_case_scores": "._missing",
    "spilled_mean_interval": "._spilled",
    "ColumnFile": "._spilled",
    "paired_mean_difference": "._paired",
    "pass_all_k": "._pass_at_k",
    "pass_at_k": "._pass_at_k",
    "paired_proportion_difference": "._paired",
    "PairedDifference": "._difference",
    "POWER": "._power",
    "proportion_cases_for_power": "._power",
    "proportion_interval": "._missing_proportion",
    "ReadOrder": "._order",
    "running_interval": "._sequential",
    "case_means": "._sequential",
    "running_side_p_values": "._sequential",
    "SCORE_TUNING": "._bounded_mean",
    "sequential_cases_for_power": "._sequential_power",
    "SequentialPlan": "._sequential_power",
}

__all__ = [
    "DIFFERENCE_TUNING",
    "FEW_CLUSTERS",
    "MAX_CASES",
    "POWER",
    "SCORE_TUNING",
    "AgreementFigure",
    "BetTuning",
    "ClusterGroups",
    "ColumnFile",
    "Interval",
    "PairedDifference",
    "ReadOrder",
    "RectifiedMean",
    "SequentialPlan",
    "benjamini_hochberg",
    "betting_cases_for_power",
    "betting_p_value",
    "betting_side_p_values",
    "bounded_mean_bounds",
    "bounded_mean_interval",
    "case_means",
    "cases_needed",
    "check_case_scores",
    "clopper_pearson",
    "clustered_mean_interval",
    "clustered_paired_difference",
    "completed_mean_interval",
    "correlation_figure",
    "cr1_mean_interval",
    "cr1_paired_difference",
    "digest_order",
    "few_clusters_warning",
    "holm_rejections",
    "kappa_figure",
    "mcnemar_exact_p_value",
    "mean_abs_difference_figure",
    "mean_interval",
    "paired_mean_difference",
    "paired_proportion_difference",
    "pass_all_k",
    "pass_at_k",
    "prediction_powered_interval",
    "proportion_cases_for_power",
    "proportion_figure",
    "proportion_interval",
    "running_interval",
    "running_side_p_values",
    "sequential_cases_for_power",
    "spilled_mean_interval",
]


__getattr__ = names_on_first_use(__name__, _EXPORTS, globals())
