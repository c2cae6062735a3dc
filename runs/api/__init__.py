"""The REST API's routers: runs (history, cases, submit, compare, gates), cases
(annotations, exports), optimizations, metrics and labels."""

from runs.api.cases import router as cases_router
from runs.api.compare import router as compare_router
from runs.api.labels import router as labels_router
from runs.api.metrics import router as metrics_router
from runs.api.optimizations import router as optimizations_router
from runs.api.runs import router as runs_router

__all__ = [
    "cases_router",
    "compare_router",
    "labels_router",
    "metrics_router",
    "optimizations_router",
    "runs_router",
]
