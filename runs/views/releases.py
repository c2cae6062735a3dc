"""Systems and their releases over time."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from metrics.release_charts import release_history_chart
from runs.selectors.releases import system_get, system_release_history, systems_overview
from runs.views._common import call


@login_required
@require_GET
def systems_page(request: HttpRequest) -> HttpResponse:
    return render(
        request, "runs/systems.html", {"systems": list(systems_overview(user=request.user))}
    )


@login_required
@require_GET
def system_page(request: HttpRequest, system_id: int) -> HttpResponse:
    system = call(system_get, user=request.user, system_id=system_id)
    points = system_release_history(system=system)
    charted = [
        (str(point.release.version or "—"), point.metrics) for point in points if point.metrics
    ]
    return render(
        request,
        "runs/system.html",
        {
            "system": system,
            "points": list(reversed(points)),
            "chart": release_history_chart(charted) if charted else "",
        },
    )
