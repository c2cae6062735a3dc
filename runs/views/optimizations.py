"""The optimizations' pages: the list, one optimization with its candidates and proof, the
part of it that follows a running search, and the winner's texts as a download."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from runs.selectors.optimization_export import FORMATS, winner_document, winner_filename
from runs.selectors.optimizations import optimization_get, optimization_winner, optimizations_list
from runs.views._common import call, page_of
from runs.views.optimization_readouts import optimization_readouts


@login_required
def optimizations_page(request: HttpRequest) -> HttpResponse:
    page = page_of(request, optimizations_list(user=request.user))
    return render(request, "runs/optimizations.html", {"page": page})


@login_required
def optimization_page(request: HttpRequest, optimization_id: int) -> HttpResponse:
    optimization = call(optimization_get, user=request.user, optimization_id=optimization_id)
    context = optimization_readouts(optimization=optimization)
    return render(request, "runs/optimization.html", context)


@login_required
def optimization_live(request: HttpRequest, optimization_id: int) -> HttpResponse:
    """The page's changing part alone, which its script swaps in while the search runs."""
    optimization = call(optimization_get, user=request.user, optimization_id=optimization_id)
    context = optimization_readouts(optimization=optimization)
    return render(request, "runs/_optimization_live.html", context)


@login_required
def optimization_winner_download(
    request: HttpRequest, optimization_id: int, format: str
) -> HttpResponse:
    winner = call(optimization_winner, user=request.user, optimization_id=optimization_id)
    response = HttpResponse(
        winner_document(winner, format=format), content_type=f"{FORMATS[format]}; charset=utf-8"
    )
    filename = winner_filename(winner, format=format)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
