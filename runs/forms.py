"""Dashboard forms: validate what a page receives, then hand it to a selector or service."""

from __future__ import annotations

import os
from datetime import datetime, time, timedelta
from typing import Any

import yaml
from django import forms
from django.utils import timezone

from runs.models import Approval, Gate, Run
from runs.selectors.cases import CASE_OUTCOMES, CaseFilters
from runs.selectors.runs import RunFilters

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
        )


def _day_start(day: Any, *, days_after: int = 0) -> datetime | None:
    if day is None:
        return None
    start = timezone.make_aware(datetime.combine(day, time.min))
    return start + timedelta(days=days_after)


class CaseFilterForm(forms.Form):
    criterion = forms.ChoiceField(required=False)
    outcome = forms.ChoiceField(
        required=False, choices=_ANY + [(name, name) for name in CASE_OUTCOMES]
    )
    q = forms.CharField(required=False, max_length=200, label="search")

    def __init__(self, data: Any, *, criteria: list[str]) -> None:
        super().__init__(data)
        _choice_field(self, "criterion").choices = [("", "whole case")] + [(c, c) for c in criteria]

    def case_filters(self) -> CaseFilters:
        if not self.is_valid():
            return CaseFilters()
        data = self.cleaned_data
        return CaseFilters(
            criterion=data["criterion"] or None,
            outcome=data["outcome"] or None,
            search=data["q"] or None,
        )


class ApprovalForm(forms.Form):
    decision = forms.ChoiceField(choices=Approval.Decision.choices, widget=forms.RadioSelect)
    comment = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    override = forms.BooleanField(
        required=False,
        label="Override: approve although the gate did not pass (say why in the comment)",
    )


class CompareForm(forms.Form):
    baseline = forms.IntegerField(min_value=1)
    candidate = forms.IntegerField(min_value=1)


class RunSubmitForm(forms.Form):
    """A run config (the keys of oloproof.yaml), typed in or copied from a recorded run."""

    @staticmethod
    def initial_from(config: dict[str, Any]) -> dict[str, Any]:
        """The form's fields filled from a recorded run's config."""
        evaluators = config.get("evaluators") or []
        lines = [
            item if isinstance(item, str) else yaml.safe_dump(item, default_flow_style=True).strip()
            for item in evaluators
        ]
        initial = {key: config.get(key) or "" for key in ("system", "dataset", "policy", "split")}
        initial["evaluators"] = "\n".join(lines)
        initial["base_dir"] = config.get("base_dir") or ""
        return initial

    system = forms.CharField(
        max_length=500,
        required=False,
        help_text="import path of the system: module:attribute or file.py:attribute",
    )
    dataset = forms.CharField(
        max_length=1000, required=False, help_text="path to a .jsonl, .json or .csv dataset"
    )
    evaluators = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
        help_text="one per line, as in oloproof.yaml: "
        "`ExactMatch: {criterion: exact_label, field: label}` or `module:evaluator`",
    )
    policy = forms.CharField(
        max_length=1000, required=False, help_text="optional: path to a release.yaml"
    )
    split = forms.CharField(max_length=200, required=False, help_text="optional: one split")
    base_dir = forms.CharField(
        max_length=1000,
        help_text="absolute folder on the workers that relative paths resolve from",
    )

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
                item = yaml.safe_load(text)
            except yaml.YAMLError as exc:
                raise forms.ValidationError(
                    f"line {number}: not valid YAML ({getattr(exc, 'problem', exc)}); "
                    "write `Name: {key: value}` or `module:evaluator`"
                ) from None
            if not isinstance(item, str | dict):
                raise forms.ValidationError(
                    f"line {number}: an evaluator is `Name: {{key: value}}` or `module:evaluator`"
                )
            evaluators.append(item)
        return evaluators

    def config(self) -> dict[str, Any]:
        data = self.cleaned_data
        config: dict[str, Any] = {
            "system": data["system"].strip(),
            "dataset": data["dataset"].strip(),
            "evaluators": data["evaluators"],
        }
        for key in ("policy", "split"):
            if data[key].strip():
                config[key] = data[key].strip()
        return config

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for key in ("system", "dataset", "evaluators"):
            if not data.get(key):
                self.add_error(key, f"{key} is required")
        return data
