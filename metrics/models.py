"""Evaluators, the verdict cache and what each run measured."""

from __future__ import annotations

from django.db import models


class Evaluator(models.Model):
    """An evaluator at one version; the version digests its file, parameters and declaration."""

    class ValueType(models.TextChoices):
        PASS_FAIL = "pass_fail"
        SCORE = "score"

    criterion = models.CharField(max_length=200)
    kind = models.CharField(max_length=200)
    version = models.CharField(max_length=64)
    source = models.CharField(max_length=1000, null=True, blank=True)
    reads = models.JSONField(default=list)
    parameters = models.JSONField(default=dict, blank=True)
    value_type = models.CharField(max_length=20, choices=ValueType.choices)
    score_range = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = (
            "criterion",
            "-created_at",
        )
        constraints = (
            models.UniqueConstraint(
                fields=["criterion", "version"], name="evaluator_unique_version"
            ),
        )

    def __str__(self) -> str:
        return f"{self.criterion} ({self.kind}, {self.version[:12]})"


class CachedVerdict(models.Model):
    """The verdict cache: a successful verdict under the engine's key.

    The key digests the evaluator's version (which includes its file digest) and
    exactly the case parts it reads, so editing an evaluator's file makes only its
    own entries unreachable.
    """

    key = models.CharField(max_length=64, unique=True)
    evaluator_version = models.CharField(max_length=64, db_index=True)
    criterion = models.CharField(max_length=200)
    value = models.FloatField()
    feedback = models.TextField(null=True, blank=True)
    scores = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.criterion} {self.key[:12]}: {self.value}"


class CaseVerdict(models.Model):
    """One criterion's verdict on one case of a run; `value` None means missing, see `error`."""

    # No index of its own: the unique (run, case_id, criterion) one leads with it.
    run = models.ForeignKey(
        "runs.Run", on_delete=models.CASCADE, related_name="verdicts", db_index=False
    )
    case_id = models.CharField(max_length=500)
    criterion = models.CharField(max_length=200)
    value = models.FloatField(null=True, blank=True)
    feedback = models.TextField(null=True, blank=True)
    scores = models.JSONField(default=dict, blank=True)
    error = models.TextField(null=True, blank=True)
    error_traceback = models.TextField(null=True, blank=True)
    cached = models.BooleanField(default=False)

    class Meta:
        constraints = (
            models.UniqueConstraint(
                fields=["run", "case_id", "criterion"], name="case_verdict_unique"
            ),
        )
        indexes = (
            models.Index(fields=["run", "criterion", "case_id"], name="case_verdict_run_criterion"),
            # The dashboard's case table filters one criterion's passed, failed or missing
            # verdicts; this index answers that without reading the table.
            models.Index(
                fields=["run", "criterion", "value", "case_id"], name="case_verdict_run_value"
            ),
        )

    def __str__(self) -> str:
        return f"{self.criterion} on {self.case_id}: {self.value}"

    @property
    def passed(self) -> bool | None:
        return None if self.value is None else self.value >= 1.0


class MetricEstimate(models.Model):
    """One metric of a run: estimate, interval, method and how many cases were observed.

    A sub-score `<criterion>.<name>` is a metric of its own with the same criterion.
    """

    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="metrics")
    evaluator = models.ForeignKey(
        Evaluator, on_delete=models.PROTECT, null=True, blank=True, related_name="estimates"
    )
    metric = models.CharField(max_length=300)
    criterion = models.CharField(max_length=200)
    estimate = models.FloatField(null=True, blank=True)
    lower = models.FloatField()
    upper = models.FloatField()
    method = models.CharField(max_length=200)
    confidence = models.FloatField()
    n_observed = models.PositiveIntegerField()
    n_missing = models.PositiveIntegerField()
    value_type = models.CharField(max_length=20, choices=Evaluator.ValueType.choices)
    score_range = models.JSONField(default=list)
    position = models.PositiveIntegerField(default=0)
    n_clusters = models.PositiveIntegerField(null=True, blank=True)
    warning = models.TextField(blank=True, default="")
    """What the figures warn of (few clusters), as the engine said it."""

    class Meta:
        ordering = (
            "run",
            "position",
        )
        constraints = (
            models.UniqueConstraint(fields=["run", "metric"], name="metric_estimate_unique"),
        )
        indexes = (models.Index(fields=["metric", "run"], name="metric_estimate_by_metric"),)

    def __str__(self) -> str:
        return f"{self.metric} of run {self.run_id}: {self.estimate}"

    @property
    def is_sub_score(self) -> bool:
        return self.metric != self.criterion


class RunValueColumns(models.Model):
    """A finished run's per-case values, one column per metric, for paired comparisons.

    Written when the run concludes (its verdicts never change after that), so a first
    comparison reads two rows instead of every verdict of both runs. The layout is in
    `metrics.value_columns`; a run without this row is compared from its verdicts.
    """

    run = models.OneToOneField(
        "runs.Run", on_delete=models.CASCADE, primary_key=True, related_name="value_columns"
    )
    case_ids = models.TextField()
    """JSON list of the run's case ids, in the run's order."""
    metrics = models.JSONField(default=list)
    """Metric names, in the order of their columns in `values`."""
    values = models.BinaryField()
    """Little-endian float64, one column of len(case_ids) values per metric; NaN missing."""
    cluster_codes = models.BinaryField(null=True)
    """Little-endian int32 per case: its index in `cluster_labels`, -1 without a cluster."""
    cluster_labels = models.JSONField(null=True)
    read_order = models.BinaryField(null=True)
    """Little-endian int32: the statistics' reading order of the cases (by id digest)."""

    def __str__(self) -> str:
        return f"value columns of run {self.run_id}"
