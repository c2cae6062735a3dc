"""Gate decisions: pending gates, the audit list (decisions, and changes to projects,
accounts, tokens and runs), and approving or rejecting one run."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from runs.access import Role, projects_visible
from runs.errors import (
    ConflictError,
    InvalidRequestError,
    OverrideNeededError,
    OverrideReasonMissingError,
)
from runs.selectors.audit import changes_audit
from runs.selectors.gates import approvals_audit, gates_pending, gates_to_decide
from runs.services import approval_create, approval_revoke, run_continue
from runs.views._common import domain_errors, get_run_or_404, page_of, query_without_page
from runs.views.forms import ApprovalForm, RevocationForm
from runs.views.history import run_page_render

AUDIT_PAGE = 50
PENDING_PAGE = 25


@login_required
@require_GET
def gates_page(request: HttpRequest) -> HttpResponse:
    pending = page_of(
        request, gates_pending(user=request.user), per_page=PENDING_PAGE, name="pending"
    )
    shown = [gate.pk for gate in pending.object_list]
    yours = gates_to_decide(user=request.user)
    return render(
        request,
        "runs/gates.html",
        {
            "pending": pending,
            "decidable": set(yours.filter(pk__in=shown).values_list("pk", flat=True)),
            "waiting": yours.count(),
            "audit": page_of(
                request, approvals_audit(user=request.user), per_page=AUDIT_PAGE, name="audit"
            ),
            "changes": page_of(
                request, changes_audit(user=request.user), per_page=AUDIT_PAGE, name="changes"
            ),
            "changes_query": query_without_page(request, "changes"),
            "can_decide": projects_visible(user=request.user, role=Role.APPROVER).exists(),
            "pending_query": query_without_page(request, "pending"),
            "audit_query": query_without_page(request, "audit"),
        },
    )


@login_required
@require_POST
def decide_page(request: HttpRequest, run_id: int) -> HttpResponse:
    """Record an approval or rejection of the run's gate, bound to this exact run."""
    run = get_run_or_404(request, run_id)
    form = ApprovalForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose approve or reject.")
        return run_page_render(request, run, approval_form=form, status=400)
    try:
        with domain_errors():
            approval = approval_create(
                run=run,
                user=request.user,
                decision=form.cleaned_data["decision"],
                comment=form.cleaned_data["comment"],
                override=form.cleaned_data["override"],
            )
    except (OverrideNeededError, OverrideReasonMissingError) as exc:
        # The approver is one tick or one sentence away: keep what they typed.
        messages.error(request, _override_advice(exc))
        return run_page_render(request, run, approval_form=form, status=400)
    except (InvalidRequestError, ConflictError) as exc:
        messages.error(request, str(exc))
        return redirect("runs:detail", run_id=run.pk)
    verb = "Approved" if approval.decision == "approve" else "Rejected"
    messages.success(request, f"{verb} the gate of run {run.pk}.")
    return redirect("runs:detail", run_id=run.pk)


def _override_advice(exc: InvalidRequestError) -> str:
    if isinstance(exc, OverrideNeededError):
        state = "failed" if exc.gate_outcome == "fail" else f"is {exc.gate_outcome}"
        return f"This gate {state}; tick 'Override' to approve it anyway, and say why."
    return "Approving over the gate needs a reason: say why in the comment."


@login_required
@require_POST
def revoke_page(request: HttpRequest, run_id: int) -> HttpResponse:
    """Revoke the standing decision on the run's gate, with the reason given."""
    run = get_run_or_404(request, run_id)
    form = RevocationForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Say why the decision is revoked.")
        return redirect("runs:detail", run_id=run.pk)
    try:
        with domain_errors():
            approval_revoke(run=run, user=request.user, reason=form.cleaned_data["reason"])
    except InvalidRequestError as exc:
        messages.error(request, str(exc))
        return redirect("runs:detail", run_id=run.pk)
    messages.success(request, f"Revoked the decision on the gate of run {run.pk}.")
    return redirect("runs:detail", run_id=run.pk)


@login_required
@require_POST
def continue_page(request: HttpRequest, run_id: int) -> HttpResponse:
    """Run more cases of the run, to settle its inconclusive sequential gate."""
    run = get_run_or_404(request, run_id)
    try:
        with domain_errors():
            continued = run_continue(user=request.user, run_id=run.pk)
    except (InvalidRequestError, ConflictError) as exc:
        messages.error(request, str(exc))
        return redirect("runs:detail", run_id=run.pk)
    messages.success(
        request,
        f"Running more cases of run {run.pk}, batch after batch, until its gate decides "
        f"(next batch: cases {run.cases_done + 1} to {continued.cases_total}).",
    )
    return redirect("runs:detail", run_id=run.pk)
