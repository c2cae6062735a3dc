"""Settings pages for projects: make one, manage its members and its code roots.

Every change goes through the writers of `runs.writers.projects`, which check the project
role with the access helper the API uses and put the change on the audit list.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from runs.access import Role, project_for
from runs.errors import NotFoundError
from runs.selectors.projects import (
    account_named,
    project_code_roots_list,
    project_members,
    projects_with_roles,
)
from runs.views._common import attempt, domain_errors
from runs.views.settings_forms import CodeRootForm, MemberForm, MemberRemoveForm, ProjectForm
from runs.writers.projects import (
    code_root_register,
    code_root_unregister,
    membership_remove,
    membership_set,
    project_create,
)


@login_required
@require_http_methods(["GET", "POST"])
def projects_page(request: HttpRequest) -> HttpResponse:
    """The projects the user belongs to, with their role, and a form to make one."""
    form = ProjectForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        made = attempt(
            request,
            project_create,
            by=request.user,
            slug=form.cleaned_data["slug"],
            name=form.cleaned_data["name"],
        )
        if made is not None:
            messages.success(request, f"Made project {made.slug}; you are its admin.")
            return redirect("runs:project_settings", slug=made.slug)
    context = {"projects": projects_with_roles(user=request.user), "form": form}
    return render(request, "runs/settings_projects.html", context)


def _admin_project(request: HttpRequest, slug: str) -> Any:
    with domain_errors():
        return project_for(user=request.user, slug=slug, role=Role.ADMIN, action="its settings")


@login_required
def project_settings_page(request: HttpRequest, slug: str) -> HttpResponse:
    """A project's members and code roots, for its admins."""
    project = _admin_project(request, slug)
    context = {
        "project": project,
        "members": project_members(project=project),
        "roots": project_code_roots_list(project=project),
        "member_form": MemberForm(),
        "root_form": CodeRootForm(),
    }
    return render(request, "runs/settings_project.html", context)


@login_required
@require_POST
def member_set_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Add a member with a role, or give a member another role."""
    project = _admin_project(request, slug)
    form = MemberForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Name an account and choose a role.")
        return redirect("runs:project_settings", slug=slug)
    username, role = form.cleaned_data["username"], form.cleaned_data["role"]
    try:
        account = account_named(username=username)
    except NotFoundError as exc:
        messages.error(request, str(exc))
        return redirect("runs:project_settings", slug=slug)
    if attempt(request, membership_set, by=request.user, project=project, user=account, role=role):
        messages.success(request, f"{username} is {role} in {slug}.")
    return redirect("runs:project_settings", slug=slug)


@login_required
@require_POST
def member_remove_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = _admin_project(request, slug)
    form = MemberRemoveForm(request.POST)
    members = project_members(project=project)
    member = members.filter(user__username=request.POST.get("username", "")).first()
    if not form.is_valid() or member is None:
        messages.error(request, "That account is not a member of this project.")
        return redirect("runs:project_settings", slug=slug)
    removed = attempt(
        request, membership_remove, by=request.user, project=project, user=member.user
    )
    if removed:
        messages.success(request, f"Removed {member.user.get_username()} from {slug}.")
    return redirect("runs:project_settings", slug=slug)


@login_required
@require_POST
def code_root_add_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = _admin_project(request, slug)
    form = CodeRootForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Give the folder's absolute path.")
        return redirect("runs:project_settings", slug=slug)
    root = attempt(
        request,
        code_root_register,
        by=request.user,
        project=project,
        path=form.cleaned_data["path"].strip(),
    )
    if root is not None:
        messages.success(request, f"{slug}'s runs may now use code from {root.path}.")
    return redirect("runs:project_settings", slug=slug)


@login_required
@require_POST
def code_root_remove_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = _admin_project(request, slug)
    form = CodeRootForm(request.POST)
    if form.is_valid() and code_root_unregister(
        by=request.user, project=project, path=form.cleaned_data["path"]
    ):
        messages.success(request, f"Removed the code root {form.cleaned_data['path']}.")
    else:
        messages.error(request, "That folder is not a code root of this project.")
    return redirect("runs:project_settings", slug=slug)
