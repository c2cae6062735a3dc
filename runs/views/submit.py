"""The guided form that queues a run, or an optimization, on the workers."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from runs.access import Role
from runs.access.requests import AuthenticatedRequest
from runs.errors import DomainError, RunConfigInvalidError
from runs.models import Run
from runs.selectors.projects import code_roots_list, projects_list
from runs.selectors.runs import recorded_configs
from runs.services import optimization_submit_by, run_submit_by
from runs.views.forms import RunSubmitForm


@login_required
def new_run_page(request: AuthenticatedRequest) -> HttpResponse:
    projects = list(
        projects_list(user=request.user, role=Role.RUNNER).values_list("slug", flat=True)
    )
    if not projects:
        raise PermissionDenied("submitting a run needs the runner role in a project")
    recorded = recorded_configs(user=request.user)
    if request.method == "POST":
        form = RunSubmitForm(request.POST, projects=projects)
        if form.is_valid():
            try:
                return _queue(request, form)
            except RunConfigInvalidError as exc:
                form.config_problems_show(exc.problems)
            except DomainError as exc:
                form.add_error(None, str(exc))
    else:
        initial = {"kind": request.GET.get("kind", "evaluation"), **_initial(request, recorded)}
        form = RunSubmitForm(initial=initial, projects=projects)
    return render(
        request,
        "runs/new_run.html",
        {
            "form": form,
            "recorded": recorded,
            "roots": list(code_roots_list(user=request.user)),
            "project_hint": projects[0] if len(projects) == 1 else "PROJECT",
        },
    )


def _queue(request: AuthenticatedRequest, form: RunSubmitForm) -> HttpResponse:
    base_dir = form.cleaned_data["base_dir"]
    project = form.cleaned_data["project"]
    if form.cleaned_data.get("kind") == "optimization":
        record = optimization_submit_by(
            user=request.user,
            config=form.optimization_config(),
            base_dir=base_dir,
            project=project,
        )
        messages.success(request, f"Optimization {record.pk} is queued.")
        return redirect("runs:optimization", optimization_id=record.pk)
    run = run_submit_by(user=request.user, config=form.config(), base_dir=base_dir, project=project)
    messages.success(request, f"Run {run.pk} submitted; this page follows it live.")
    return redirect("runs:detail", run_id=run.pk)


def _initial(request: HttpRequest, recorded: list[Run]) -> dict[str, object]:
    source = request.GET.get("from", "")
    for run in recorded:
        if str(run.pk) == source:
            return {**RunSubmitForm.initial_from(run.config), "project": run.project.slug}
    return {}
