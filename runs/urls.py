"""The dashboard's routes (the REST API lives under /api/, see evalsite.api)."""

from django.urls import path

from runs.views import cases, compare, gates, history, labels, optimizations, releases, submit

app_name = "runs"

urlpatterns = [
    path("", history.runs_page, name="list"),
    path("runs/status.json", history.runs_status, name="status"),
    path("runs/new/", submit.new_run_page, name="new"),
    path("runs/<int:run_id>/", history.run_page, name="detail"),
    path("runs/<int:run_id>/cases/", cases.run_cases_page, name="cases"),
    path(
        "runs/<int:run_id>/cases.csv",
        cases.run_cases_export_page,
        {"export_format": "csv"},
        name="cases_csv",
    ),
    path(
        "runs/<int:run_id>/cases.jsonl",
        cases.run_cases_export_page,
        {"export_format": "jsonl"},
        name="cases_jsonl",
    ),
    path("runs/<int:run_id>/annotations", cases.annotate_page, name="annotate"),
    path("runs/<int:run_id>/cases/<path:case_id>", cases.case_page, name="case"),
    path("runs/<int:run_id>/metrics/<path:metric>/", labels.metric_page, name="metric"),
    path("runs/<int:run_id>/review/<str:metric>/", labels.review_page, name="review"),
    path("runs/<int:run_id>/decide", gates.decide_page, name="decide"),
    path("runs/<int:run_id>/revoke", gates.revoke_page, name="revoke"),
    path("runs/<int:run_id>/continue", gates.continue_page, name="continue"),
    path("systems/", releases.systems_page, name="systems"),
    path("systems/<int:system_id>/", releases.system_page, name="system"),
    path("compare/", compare.compare_page, name="compare"),
    path("compare/export", compare.compare_export, name="compare_export"),
    path("gates/", gates.gates_page, name="gates"),
    path("optimizations/", optimizations.optimizations_page, name="optimizations"),
    path(
        "optimizations/<int:optimization_id>/",
        optimizations.optimization_page,
        name="optimization",
    ),
]
