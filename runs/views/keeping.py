"""Naming, tagging, hiding and deleting a run from its page (through `runs.writers.run_keeping`)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from runs.views._common import attempt
from runs.views.settings_forms import RunHideForm, RunNameForm, RunTagsForm
from runs.writers.run_keeping import run_hide, run_remove, run_rename, run_tags_set


@login_required
@require_POST
def rename_page(request: HttpRequest, run_id: int) -> HttpResponse:
    form = RunNameForm(request.POST)
    name = form.cleaned_data["name"] if form.is_valid() else ""
    if attempt(request, run_rename, by=request.user, run_id=run_id, name=name) is not None:
        messages.success(request, f"Named run {run_id}." if name else f"Run {run_id} has no name.")
    return redirect("runs:detail", run_id=run_id)


@login_required
@require_POST
def tags_page(request: HttpRequest, run_id: int) -> HttpResponse:
    """The run's tags, as typed: separated by commas or spaces."""
    form = RunTagsForm(request.POST)
    typed = form.cleaned_data["tags"] if form.is_valid() else ""
    tags = typed.replace(",", " ").split()
    if attempt(request, run_tags_set, by=request.user, run_id=run_id, tags=tags) is not None:
        messages.success(request, f"Tagged run {run_id}: {', '.join(tags) or 'no tags'}.")
    return redirect("runs:detail", run_id=run_id)


@login_required
@require_POST
def hide_page(request: HttpRequest, run_id: int) -> HttpResponse:
    form = RunHideForm(request.POST)
    hidden = form.is_valid() and form.cleaned_data["hidden"]
    if attempt(request, run_hide, by=request.user, run_id=run_id, hidden=hidden) is not None:
        said = "hidden from the history" if hidden else "shown in the history again"
        messages.success(request, f"Run {run_id} is {said}.")
    return redirect("runs:detail", run_id=run_id)


@login_required
@require_POST
def delete_page(request: HttpRequest, run_id: int) -> HttpResponse:
    deleted = attempt(request, run_remove, by=request.user, run_id=run_id)
    if deleted is None:
        return redirect("runs:detail", run_id=run_id)
    messages.success(request, f"Deleted {deleted}.")
    return redirect("runs:list")
