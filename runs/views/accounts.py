"""Settings pages for accounts (make, disable, new password) and one's API tokens.

A new password or token is shown on the page that made it, this once: only its hash
is kept. Who may manage which account is `runs.access.accounts_manageable`.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from runs.access import Role, project_for
from runs.selectors.accounts import account_get, accounts_list, token_get, tokens_list
from runs.selectors.projects import projects_list
from runs.views._common import attempt, call, domain_errors
from runs.views.settings_forms import AccountActiveForm, AccountForm, TokenForm
from runs.writers.accounts import account_active_set, account_create, account_password_reset
from runs.writers.tokens import api_token_create, api_token_revoke


def _accounts_context(request: HttpRequest, form: AccountForm, **shown: Any) -> dict[str, Any]:
    return {
        "accounts": accounts_list(user=request.user),
        "projects": projects_list(user=request.user, role=Role.ADMIN),
        "form": form,
        **shown,
    }


@login_required
@require_http_methods(["GET", "POST"])
def accounts_page(request: HttpRequest) -> HttpResponse:
    """The accounts the user manages; a form to make one in a project they administer."""
    form = AccountForm(request.POST or None)
    shown: dict[str, Any] = {}
    if request.method == "POST" and form.is_valid():
        with domain_errors():
            project = project_for(
                user=request.user,
                slug=form.cleaned_data["project"],
                role=Role.ADMIN,
                action="making accounts",
            )
        made = attempt(
            request,
            account_create,
            by=request.user,
            username=form.cleaned_data["username"],
            role=form.cleaned_data["role"],
            project=project,
        )
        if made is not None:
            shown = {"secret_for": made[0].get_username(), "secret": made[1]}
            form = AccountForm()
    return render(request, "runs/settings_accounts.html", _accounts_context(request, form, **shown))


@login_required
@require_POST
def account_active_page(request: HttpRequest, account_id: int) -> HttpResponse:
    account = call(account_get, user=request.user, account_id=account_id, action="disabling")
    form = AccountActiveForm(request.POST)
    active = form.is_valid() and form.cleaned_data["active"]
    if attempt(request, account_active_set, by=request.user, account=account, active=active):
        verb = "Enabled" if active else "Disabled"
        messages.success(request, f"{verb} the account {account.get_username()}.")
    return redirect("runs:accounts")


@login_required
@require_POST
def account_password_page(request: HttpRequest, account_id: int) -> HttpResponse:
    """A new generated password for the account, shown once on the accounts page."""
    account = call(account_get, user=request.user, account_id=account_id, action="a password")
    chosen = attempt(request, account_password_reset, by=request.user, account=account)
    shown = {"secret_for": account.get_username(), "secret": chosen} if chosen else {}
    context = _accounts_context(request, AccountForm(), **shown)
    return render(request, "runs/settings_accounts.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def tokens_page(request: HttpRequest) -> HttpResponse:
    """The user's own API tokens; a form to make one (shown once), optionally for one project."""
    form = TokenForm(request.POST or None)
    token = ""
    if request.method == "POST" and form.is_valid():
        slug = form.cleaned_data["project"]
        project = call(project_for, user=request.user, slug=slug) if slug else None
        made = attempt(
            request,
            api_token_create,
            by=request.user,
            user=request.user,
            name=form.cleaned_data["name"],
            project=project,
        )
        token = made[1] if made is not None else ""
        form = TokenForm()
    context = {
        "tokens": tokens_list(user=request.user),
        "projects": projects_list(user=request.user),
        "form": form,
        "token": token,
    }
    return render(request, "runs/settings_tokens.html", context)


@login_required
@require_POST
def token_revoke_page(request: HttpRequest, token_id: int) -> HttpResponse:
    token = call(token_get, user=request.user, token_id=token_id)
    api_token_revoke(token=token, by=request.user)
    messages.success(request, f"Revoked the token {token.prefix}….")
    return redirect("runs:tokens")
