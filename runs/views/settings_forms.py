"""Forms of the settings pages (projects, members, code roots, accounts, API tokens) and of
a run's keeping (its name, tags, hiding)."""

from __future__ import annotations

from django import forms

from runs.models import Membership

ROLE_CHOICES = Membership.Role.choices


class ProjectForm(forms.Form):
    slug = forms.SlugField(max_length=100, label="Short name")
    name = forms.CharField(max_length=200, required=False, label="Name")


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150, label="Account")
    role = forms.ChoiceField(choices=ROLE_CHOICES)


class MemberRemoveForm(forms.Form):
    username = forms.CharField(max_length=150)


class CodeRootForm(forms.Form):
    path = forms.CharField(max_length=1000, label="Folder")


class AccountForm(forms.Form):
    username = forms.CharField(max_length=150, label="Name")
    project = forms.SlugField(max_length=100)
    role = forms.ChoiceField(choices=ROLE_CHOICES, initial=Membership.Role.RUNNER)


class AccountActiveForm(forms.Form):
    active = forms.BooleanField(required=False)


class TokenForm(forms.Form):
    name = forms.CharField(max_length=200, required=False, label="Label")
    project = forms.SlugField(max_length=100, required=False)


class RunNameForm(forms.Form):
    name = forms.CharField(max_length=200, required=False)


class RunTagsForm(forms.Form):
    tags = forms.CharField(max_length=1200, required=False)


class RunHideForm(forms.Form):
    hidden = forms.BooleanField(required=False)
