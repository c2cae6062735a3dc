"""The dashboard's routes (the REST API lives under /api/, see evalsite.api)."""

from django.urls import path

from runs.views import (
    accounts,
    cases,
    compare,
    compare_case,
    gates,
    history,
    keeping,
    labels,
    optimizations,
    releases,
    settings,
    submit,
)

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
    path("runs/<int:run_id>/name", keeping.rename_page, name="rename"),
    path("runs/<int:run_id>/tags", keeping.tags_page, name="tags"),
    path("runs/<int:run_id>/hide", keeping.hide_page, name="hide"),
    path("runs/<int:run_id>/delete", keeping.delete_page, name="delete"),
    path("systems/", releases.systems_page, name="systems"),
    path("systems/<int:system_id>/", releases.system_page, name="system"),
    path("compare/", compare.compare_page, name="compare"),
    path("compare/export", compare.compare_export, name="compare_export"),
    path("compare/case/<path:case_id>", compare_case.compare_case_page, name="compare_case"),
    path("gates/", gates.gates_page, name="gates"),
    path("optimizations/", optimizations.optimizations_page, name="optimizations"),
    path(
        "optimizations/<int:optimization_id>/",
        optimizations.optimization_page,
        name="optimization",
    ),
    path(
        "optimizations/<int:optimization_id>/live",
        optimizations.optimization_live,
        name="optimization_live",
    ),
    *(
        path(
            f"optimizations/<int:optimization_id>/winner.{format}",
            optimizations.optimization_winner_download,
            {"format": format},
            name=f"optimization_winner_{format}",
        )
        for format in ("json", "yaml")
    ),
    path("settings/", settings.projects_page, name="settings"),
    path(
        "settings/projects/<slug:slug>/",
        settings.project_settings_page,
        name="project_settings",
    ),
    path("settings/projects/<slug:slug>/members", settings.member_set_page, name="member_set"),
    path(
        "settings/projects/<slug:slug>/members/remove",
        settings.member_remove_page,
        name="member_remove",
    ),
    path("settings/projects/<slug:slug>/roots", settings.code_root_add_page, name="code_root_add"),
    path(
        "settings/projects/<slug:slug>/roots/remove",
        settings.code_root_remove_page,
        name="code_root_remove",
    ),
    path("settings/accounts/", accounts.accounts_page, name="accounts"),
    path(
        "settings/accounts/<int:account_id>/active",
        accounts.account_active_page,
        name="account_active",
    ),
    path(
        "settings/accounts/<int:account_id>/password",
        accounts.account_password_page,
        name="account_password",
    ),
    path("settings/tokens/", accounts.tokens_page, name="tokens"),
    path("settings/tokens/<int:token_id>/revoke", accounts.token_revoke_page, name="token_revoke"),
]
