"""One case of two compared runs: where the two transcripts first differ, side by side."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from runs.selectors.transcript_steps import case_transcripts_compare
from runs.views._common import get_run_or_404
from runs.views.forms import CompareForm


@login_required
@require_GET
def compare_case_page(request: HttpRequest, case_id: str) -> HttpResponse:
    """`compare/case/<case id>?baseline=A&candidate=B`."""
    form = CompareForm(request.GET or None)
    if not form.is_valid():
        return HttpResponse(
            "name a baseline and a candidate run (?baseline=&candidate=)",
            status=400,
            content_type="text/plain; charset=utf-8",
        )
    baseline = get_run_or_404(request, form.cleaned_data["baseline"])
    candidate = get_run_or_404(request, form.cleaned_data["candidate"])
    compared = case_transcripts_compare(baseline=baseline, candidate=candidate, case_id=case_id)
    context = {"baseline": baseline, "candidate": candidate, "compared": compared}
    return render(request, "runs/compare_case.html", context)
