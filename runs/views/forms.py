"""Dashboard forms: validate what a page receives, then hand it to a selector or service."""

from __future__ import annotations

import os
from datetime import datetime, time, timedelta
from typing import Any

import yaml
from django import forms
from django.http import QueryDict
from django.utils import timezone

import oloproof_core as engine
import oloproof_core.optimize as optimize
from runs.models import Approval, Gate, Rating, Run
from runs.selectors.annotations import ANNOTATION_FILTERS
from runs.selectors.case_search import SEARCH_FIELDS
from runs.selectors.case_table import FIXED_COLUMNS
from runs.selectors.cases import CASE_OUTCOMES, CaseFilters
from runs.selectors.runs import RunFilters
from runs.views.repeats_field import RepeatsField

_ANY = [("", "any")]


def _choice_field(form: forms.Form, name: str) -> forms.ChoiceField:
    """The form's own copy of a declared choice field, whose choices depend on the data."""
    field = form.fields[name]
    if not isinstance(field, forms.ChoiceField):
        raise TypeError(f"{type(form).__name__}.{name} is not a choice field")
    return field


class RunFilterForm(forms.Form):
    system = forms.ChoiceField(required=False)
    release = forms.ChoiceField(required=False)
    dataset = forms.CharField(required=False, max_length=64)
    status = forms.ChoiceField(required=False, choices=_ANY + list(Run.Status.choices))
    gate = forms.ChoiceField(
        required=False, choices=[*_ANY, *Gate.Outcome.choices, ("none", "no gate")]
    )
    created_after = forms.DateField(
        required=False, label="from", widget=forms.DateInput(attrs={"type": "date"})
    )
    created_before = forms.DateField(
        required=False, label="to", widget=forms.DateInput(attrs={"type": "date"})
    )
    tag = forms.CharField(required=False, max_length=50)
    hidden = forms.BooleanField(required=False, label="hidden runs too")

    def __init__(
        self, data: Any, *, systems: list[str], releases: list[str], datasets: list[Any]
    ) -> None:
        super().__init__(data)
        _choice_field(self, "system").choices = _ANY + [(name, name) for name in systems]
        _choice_field(self, "release").choices = _ANY + [(version, version) for version in releases]
        self.fields["dataset"].widget = forms.Select(
            choices=_ANY
            + [
                (item.digest, f"{os.path.basename(item.source)} · {item.digest[:10]}")
                for item in datasets
            ]
        )

    def run_filters(self) -> RunFilters:
        if not self.is_valid():
            return RunFilters()
        data = self.cleaned_data
        return RunFilters(
            system=data["system"] or None,
            release=data["release"] or None,
            dataset_digest=data["dataset"] or None,
            status=data["status"] or None,
            gate_outcome=data["gate"] or None,
            created_after=_day_start(data["created_after"]),
            # "to" includes the whole day it names.
            created_before=_day_start(data["created_before"], days_after=1),
            tag=data["tag"] or None,
            hidden=data["hidden"],
        )


def _day_start(day: Any, *, days_after: int = 0) -> datetime | None:
    """The start of `day` (plus days); None when that is past the calendar's end (no bound)."""
    if day is None:
        return None
    try:
        start = timezone.make_aware(datetime.combine(day, time.min))
        return start + timedelta(days=days_after)
    except (OverflowError, ValueError):
        return None


class CaseFilterForm(forms.Form):
    criterion = forms.ChoiceField(required=False)
    outcome = forms.ChoiceField(
        required=False, choices=_ANY + [(name, name) for name in CASE_OUTCOMES]
    )
    q = forms.CharField(required=False, max_length=200, label="search")
    search_in = forms.ChoiceField(
        required=False,
        label="in",
        choices=[("", "everything")] + [(name, name.replace("_", " ")) for name in SEARCH_FIELDS],
    )
    annotation = forms.ChoiceField(required=False, choices=_ANY + list(ANNOTATION_FILTERS.items()))
    cols = forms.MultipleChoiceField(
        required=False,
        choices=[("case", "case"), *FIXED_COLUMNS.items()],
        widget=forms.CheckboxSelectMultiple,
    )
    crit = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple)

    def __init__(self, data: Any, *, criteria: list[str]) -> None:
        super().__init__(data)
        _choice_field(self, "criterion").choices = [("", "whole case")] + [(c, c) for c in criteria]
        _choice_field(self, "crit").choices = [(c, c) for c in criteria]

    def case_filters(self) -> CaseFilters:
        if not self.is_valid():
            return CaseFilters()
        data = self.cleaned_data
        return CaseFilters(
            criterion=data["criterion"] or None,
            outcome=data["outcome"] or None,
            search=data["q"] or None,
            search_in=data["search_in"] or None,
            annotation=data["annotation"] or None,
        )

    def columns_asked(self) -> tuple[list[str] | None, list[str] | None]:
        """The fixed and criterion columns the query names; None for both when it names none.

        The column picker always sends `cols=case`, so a reader who unticks every other
        column is told apart from one who never picked.
        """
        if not isinstance(self.data, QueryDict) or "cols" not in self.data:
            return None, None
        # Unknown names (a criterion since renamed) are dropped later, not refused here.
        return self.data.getlist("cols"), self.data.getlist("crit")


class AnnotationForm(forms.Form):
    rating = forms.ChoiceField(
        required=False,
        choices=[("", "no rating"), *Rating.choices],
        widget=forms.RadioSelect,
    )
    score = forms.FloatField(
        required=False,
        min_value=0.0,
        max_value=1.0,
        widget=forms.NumberInput(attrs={"step": "any", "min": "0", "max": "1"}),
        help_text="optional, from 0 to 1",
    )
    comment = forms.CharField(
        required=False, max_length=10_000, widget=forms.Textarea(attrs={"rows": 3})
    )


class ApprovalForm(forms.Form):
    decision = forms.ChoiceField(choices=Approval.Decision.choices, widget=forms.RadioSelect)
    comment = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    override = forms.BooleanField(
        required=False,
        label="Override: approve although the gate did not pass (say why in the comment)",
    )


class RevocationForm(forms.Form):
    reason = forms.CharField(max_length=10_000, widget=forms.Textarea(attrs={"rows": 2}))


class CompareForm(forms.Form):
    baseline = forms.IntegerField(min_value=1)
    candidate = forms.IntegerField(min_value=1)


_FORM_FIELD_KINDS: dict[str, Any] = {
    "import": lambda: forms.CharField(max_length=500),
    "path": lambda: forms.CharField(max_length=1000),
    "string": lambda: forms.CharField(max_length=200),
    "evaluators": lambda: forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"})
    ),
    "positive_int": lambda: forms.IntegerField(min_value=1),
    "positive_number": lambda: forms.FloatField(
        min_value=0, widget=forms.NumberInput(attrs={"step": "any"})
    ),
    "isolation": lambda: forms.ChoiceField(
        choices=[("", "process (default)"), ("process", "process"), ("thread", "thread")]
    ),
    "sandbox": lambda: forms.ChoiceField(
        choices=[
            ("", "auto (default)"),
            ("auto", "auto"),
            ("required", "required"),
            ("off", "off"),
        ]
    ),
    "confidence": lambda: forms.FloatField(widget=forms.NumberInput(attrs={"step": "any"})),
}


_AT_LEAST_ONCE = {
    "repeats": "each case runs at least once",
    "judge_repeats": "each output is judged at least once",
}


def _form_field(item: engine.RunConfigField) -> forms.Field:
    """The form's field for a config key; a whole number with a most (repeats) says its
    range when a value falls outside it, as the engine's check of a config file does."""
    if item.kind == "repeats":
        return RepeatsField(most=item.most or 1)
    if item.kind != "positive_int" or item.most is None:
        return _FORM_FIELD_KINDS[item.kind]()
    outside = f"{item.name} must be a whole number from 1 to {item.most}"
    return forms.IntegerField(
        min_value=1,
        max_value=item.most,
        error_messages={
            "invalid": f"{outside}, e.g. 3",
            "min_value": f"{outside}: {_AT_LEAST_ONCE.get(item.name, 'at least once')}",
            "max_value": f"{outside}: beyond {item.most}, more cases serve a run better",
        },
    )


_EVALUATOR_HELP = (
    "one per line, as in oloproof.yaml: "
    "`ExactMatch: {criterion: exact_label, field: label}` or `module:evaluator`"
)


class RunSubmitForm(forms.Form):
    """A run config (the keys of oloproof.yaml), typed in or copied from a recorded run.

    Its fields are the engine's run-config schema (`RUN_CONFIG_FIELDS`), so the form,
    the command line and the API accept the same keys; the engine checks the result.
    """

    project = forms.ChoiceField(help_text="the project the run belongs to")
    base_dir = forms.CharField(
        max_length=1000,
        help_text="absolute folder on the workers that relative paths resolve from; it "
        "must lie inside one of the project's registered code roots",
    )

    def __init__(self, *args: Any, projects: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        project = _choice_field(self, "project")
        project.choices = [(slug, slug) for slug in projects]
        if len(projects) == 1:  # nothing to choose: the one project the user runs in
            project.required = False
            self._only_project = projects[0]
        for item in engine.RUN_CONFIG_FIELDS:
            field = _form_field(item)
            field.required = False  # missing keys are reported by the engine's check
            field.help_text = _EVALUATOR_HELP if item.kind == "evaluators" else item.meaning
            if not item.required:
                field.help_text = f"optional: {field.help_text}"
            self.fields[item.name] = field

    @staticmethod
    def initial_from(config: dict[str, Any]) -> dict[str, Any]:
        """The form's fields filled from a recorded run's config."""
        initial = {
            item.name: config.get(item.name) or ""
            for item in engine.RUN_CONFIG_FIELDS
            if item.kind != "evaluators"
        }
        evaluators = config.get("evaluators") or []
        initial["evaluators"] = "\n".join(
            item if isinstance(item, str) else yaml.safe_dump(item, default_flow_style=True).strip()
            for item in evaluators
        )
        initial["base_dir"] = config.get("base_dir") or ""
        return initial

    _only_project = ""

    def clean_project(self) -> str:
        return str(self.cleaned_data.get("project") or self._only_project)

    def clean_base_dir(self) -> str:
        base_dir = str(self.cleaned_data["base_dir"]).strip()
        if not os.path.isabs(base_dir):
            raise forms.ValidationError("give an absolute folder, e.g. /srv/evals/support_bot")
        return base_dir

    def clean_evaluators(self) -> list[Any]:
        lines = [line for line in str(self.cleaned_data["evaluators"]).splitlines() if line.strip()]
        evaluators: list[Any] = []
        for number, line in enumerate(lines, start=1):
            text = line.strip().removeprefix("- ").strip()
            try:
                item = engine.yaml_load(text, source=f"evaluators line {number}")
            except engine.ConfigError as exc:
                raise forms.ValidationError(
                    f"line {number}: not valid YAML ({exc}); "
                    "write `Name: {key: value}` or `module:evaluator`"
                ) from None
            if not isinstance(item, str | dict):
                raise forms.ValidationError(
                    f"line {number}: an evaluator is `Name: {{key: value}}` or `module:evaluator`"
                )
            evaluators.append(item)
        return evaluators

    kind = forms.ChoiceField(
        required=False,
        choices=[("evaluation", "an evaluation"), ("optimization", "an optimization")],
        initial="evaluation",
        widget=forms.RadioSelect,
    )
    engine = forms.ChoiceField(
        required=False, choices=[(name, name) for name in optimize.ENGINE_CHOICES]
    )
    budget_metric_calls = forms.IntegerField(required=False, min_value=1, label="metric calls")
    budget_usd = forms.FloatField(required=False, min_value=0, label="US dollars")
    budget_wall_time_s = forms.FloatField(required=False, min_value=0, label="wall time (s)")
    components = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
        help_text="optional seed texts, one `name: text` per line (default: the system's own)",
    )

    def optimization_config(self) -> dict[str, Any]:
        """The optimization config the form describes (its run keys, engine, budget)."""
        data = self.cleaned_data
        config = {
            key: value for key, value in self.config().items() if key not in ("split", "baseline")
        }
        config["engine"] = data.get("engine") or "auto"
        config["budget"] = {
            key: data[f"budget_{key}"]
            for key in optimize.LIMITS
            if data.get(f"budget_{key}") not in (None, "")
        }
        if str(data.get("components") or "").strip():
            config["components"] = yaml.safe_load(data["components"])
        return config

    def _check_optimization(self) -> None:
        try:
            optimize.check_optimize_config(self.optimization_config(), label="config")
        except (engine.ConfigError, yaml.YAMLError) as exc:
            self.add_error(None, str(exc))

    def config(self) -> dict[str, Any]:
        """The run config the form describes: every key given a value, and no other."""
        config: dict[str, Any] = {}
        for item in engine.RUN_CONFIG_FIELDS:
            value = self.cleaned_data.get(item.name)
            if isinstance(value, str):
                value = value.strip()
            if value not in (None, "", []):
                config[item.name] = value
        return config

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for item in engine.RUN_CONFIG_FIELDS:
            if item.required and not data.get(item.name) and item.name not in self.errors:
                self.add_error(item.name, f"{item.name} is required")
        # An evaluation's config is checked by the service that queues it, as deeply as
        # a worker will load it (`run_config_verify`); `config_problems_show` puts each
        # problem it finds beside its field.
        if not self.errors and data.get("kind") == "optimization":
            self._check_optimization()
        return data

    def config_problems_show(self, problems: list[tuple[str | None, str]]) -> None:
        """Each problem beside the field of the config key it concerns (else above the form)."""
        for key, message in problems:
            self.add_error(key if key in self.fields else None, message)
