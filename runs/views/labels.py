"""A run's metric page (the judge's figure beside the one corrected by people's labels,
calibration) and the review queue where people label the randomly drawn cases."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from runs.access import Role, role_allows
from runs.errors import InvalidRequestError
from runs.models import Run
from runs.selectors.labels import review_queue
from runs.views._common import call, domain_errors, get_run_or_404
from runs.views.label_readouts import metric_page_readouts, position_before, queue_readouts
from runs.writers.labels import save_label


@login_required
@require_GET
def metric_page(request: HttpRequest, run_id: int, metric: str) -> HttpResponse:
    run = get_run_or_404(request, run_id)
    readouts = call(
        metric_page_readouts,
        user=request.user,
        run=run,
        metric=metric,
        width_text=request.GET.get("width", ""),
    )
    return render(request, "runs/metric.html", {"run": run, **readouts})


@login_required
@require_http_methods(["GET", "POST"])
def review_page(request: HttpRequest, run_id: int, metric: str) -> HttpResponse:
    """The next unlabelled draw; a POST labels the case shown and moves on to the next."""
    run = get_run_or_404(request, run_id)
    if request.method == "POST":
        return _label(request, run, metric)
    return _queue_render(request, run, metric, after=position_before(request.GET.get("after")))


def _label(request: HttpRequest, run: Run, metric: str) -> HttpResponse:
    form = request.POST
    try:
        with domain_errors():
            save_label(
                request.user,
                run.pk,
                form.get("case_id", ""),
                metric,
                form.get("value", ""),
                note=form.get("note", ""),
            )
    except InvalidRequestError as exc:
        # The same draw again, with what was typed, and why it was not saved.
        shown = position_before(form.get("position"), minus=1)
        return _queue_render(request, run, metric, after=shown, error=str(exc), status=400)
    query: dict[str, str] = {}
    if request.GET.get("blind") == "1":
        query["blind"] = "1"
    if request.GET.get("after") not in (None, "") and form.get("position", "").isdecimal():
        # A person who skipped goes on past the draw just labelled, not back to the skip.
        query["after"] = form["position"]
    target = reverse("runs:review", args=[run.pk, metric])
    return HttpResponseRedirect(target + (f"?{urlencode(query)}" if query else ""), status=303)


def _queue_render(
    request: HttpRequest,
    run: Run,
    metric: str,
    *,
    after: int | None,
    error: str = "",
    status: int = 200,
) -> HttpResponse:
    blind = request.GET.get("blind") == "1"
    try:
        queue = call(
            review_queue,
            actor=request.user,
            run_id=run.pk,
            criterion=metric,
            blind=blind,
            after=after,
        )
    except InvalidRequestError as exc:
        # A sub-score, or a run that has not read its dataset: there is no queue to show.
        raise Http404(str(exc)) from None
    context: dict[str, Any] = {
        "run": run,
        "can_label": role_allows(user=request.user, project=run.project, role=Role.RUNNER),
        "error": error,
        "note": request.POST.get("note", "") if error else "",
        "value_text": request.POST.get("value", "") if error else "",
        **queue_readouts(queue=queue, blind=blind, after=after),
    }
    return render(request, "runs/review.html", context, status=status)
