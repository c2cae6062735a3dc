"""The comparison case by case: one page of compared cases, the whole export, streamed,
and several runs side by side, each against one baseline.

Thin: each route reads through the comparison selectors, which check that the caller
may see both runs.
"""

from typing import Any, Literal

from django.http import HttpRequest, StreamingHttpResponse
from ninja import Field, Query, Router, Schema
from ninja.pagination import paginate

from runs.api.paging import Paging
from runs.api.schemas import ComparedCaseOut, SideBySideOut
from runs.selectors.comparison_cases import (
    CaseView,
    ComparedCasePages,
    comparison_cases,
    comparison_export_lines,
)
from runs.selectors.runs import run_get
from runs.selectors.side_by_side import runs_side_by_side_named
from runs.views.compare import export_response

router = Router(tags=["runs"])


class ComparedCasesQuery(Schema):
    baseline: int
    candidate: int
    show: Literal["all", "changed", "regressed", "improved", "missing", "output_changed"] = "all"
    metric: str | None = None
    order: Literal["case", "change", "-change"] = "case"
    fdr: bool = True
    cases: Literal[
        "all",
        "regressed",
        "improved",
        "flaky",
        "changed",
        "stable_pass",
        "stable_fail",
        "unchanged",
        "missing",
    ] = Field(
        "all",
        description="keep the cases with this status against their own noise, when the "
        "runs repeated their cases: regressed, improved, flaky, ... (all their repeats)",
    )

    def view(self) -> CaseView:
        return CaseView(
            show=self.show, metric=self.metric, order=self.order, fdr=self.fdr, cases=self.cases
        )


class ExportQuery(ComparedCasesQuery):
    format: Literal["csv", "jsonl"] = "csv"


@router.get(
    "/compare/cases",
    response=list[ComparedCaseOut],
    summary="Two runs' cases side by side: both outputs, each metric's values and change",
)
@paginate(Paging, default_limit=50)
def compared_cases(request: HttpRequest, query: Query[ComparedCasesQuery]) -> Any:
    baseline = run_get(user=request.user, run_id=query.baseline)
    candidate = run_get(user=request.user, run_id=query.candidate)
    changes = comparison_cases(
        user=request.user, baseline=baseline, candidate=candidate, view=query.view()
    )
    return ComparedCasePages(changes=changes, baseline=baseline, candidate=candidate, records=True)


@router.get(
    "/compare/export",
    response={200: None},
    summary="The compared cases as a CSV or JSONL file (one row per case), streamed",
)
def compared_cases_export(request: HttpRequest, query: Query[ExportQuery]) -> StreamingHttpResponse:
    baseline = run_get(user=request.user, run_id=query.baseline)
    candidate = run_get(user=request.user, run_id=query.candidate)
    lines = comparison_export_lines(
        user=request.user,
        baseline=baseline,
        candidate=candidate,
        view=query.view(),
        format=query.format,
    )
    return export_response(lines, format=query.format, baseline=baseline.pk, candidate=candidate.pk)


class SideBySideQuery(Schema):
    runs: list[int] = Field(..., min_length=1, max_length=8)
    baseline: int | None = None
    fdr: bool = True


@router.get(
    "/compare/runs",
    response=SideBySideOut,
    summary="Up to eight runs of one dataset, each compared with one baseline (paired by "
    "case id); without a baseline, the approved run among them, else the earliest release's",
)
def compare_side_by_side(request: HttpRequest, query: Query[SideBySideQuery]) -> dict[str, Any]:
    return runs_side_by_side_named(
        user=request.user, run_ids=query.runs, baseline_id=query.baseline, fdr=query.fdr
    ).to_dict()
