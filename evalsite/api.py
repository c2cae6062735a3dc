"""The REST API at /api/: one NinjaAPI mounting each app's router.

Every route needs an API token (`Authorization: Bearer olo_…`, made on the dashboard's
Settings page or with `oloproof token create`) or a logged-in session. The docs page
(/api/docs) and schema (/api/openapi.json) need a login too; the docs' scripts
are served from django-ninja's own static files, never a CDN.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI

from evalsite.api_docs import LocalSwagger
from oloproof_core import OloproofError
from runs.api import (
    cases_router,
    compare_router,
    labels_router,
    metrics_router,
    optimizations_router,
    runs_router,
)
from runs.api.auth import api_auth
from runs.errors import DomainError

api = NinjaAPI(
    title="oloproof API",
    version="1",
    description="Runs, metrics, comparisons and release gates of oloproof.",
    auth=api_auth,
    urls_namespace="api",
    docs_decorator=login_required,
    docs=LocalSwagger(),
)
api.add_router("/", runs_router)
api.add_router("/", compare_router)
api.add_router("/", metrics_router)
api.add_router("/", optimizations_router)
api.add_router("/", cases_router)
api.add_router("/", labels_router)


@api.exception_handler(DomainError)
def domain_error(request: HttpRequest, exc: DomainError) -> HttpResponse:
    return api.create_response(request, {"detail": str(exc)}, status=exc.status)


@api.exception_handler(OloproofError)
def engine_error(request: HttpRequest, exc: OloproofError) -> HttpResponse:
    """A config, dataset, policy or declaration the engine refused: the caller's to fix."""
    return api.create_response(request, {"detail": str(exc)}, status=400)
