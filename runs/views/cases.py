"""A run's case table (columns, filters, search), one case with its annotations,
annotating a case, and exporting the table's cases."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from runs.access import Role, role_allows
from runs.errors import InvalidRequestError
from runs.selectors.annotations import annotation_of, case_annotations
from runs.selectors.case_repeats import case_repeats, run_repeats, run_repeats_auto
from runs.selectors.case_table import (
    FIXED_COLUMNS,
    case_table_page,
    case_table_rows,
    columns_chosen,
    criterion_tops,
    page_number_cursor,
)
from runs.selectors.cases import case_detail, run_criteria, run_outcome_counts
from runs.selectors.exports import run_cases_export
from runs.selectors.transcripts import case_transcript
from runs.views._common import call, cursor_of, domain_errors, get_run_or_404, query_without_cursor
from runs.views.forms import AnnotationForm, CaseFilterForm
from runs.writers.annotations import AnnotationValues, case_annotation_save


@login_required
@require_GET
def run_cases_page(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_run_or_404(request, run_id)
    criteria = run_criteria(run=run)
    names = [item.metric for item in criteria]
    form = CaseFilterForm(request.GET or None, criteria=names)
    filters = form.case_filters()
    fixed, picked = form.columns_asked()
    columns = columns_chosen(fixed=fixed, criteria=picked, known=names)
    counts = run_outcome_counts(run=run)
    cursor = cursor_of(request) or page_number_cursor(request.GET.get("page"), filters=filters)
    page = case_table_page(run=run, filters=filters, counts=counts, cursor=cursor)
    rows = case_table_rows(run=run, cases=page.cases, tops=criterion_tops(criteria))
    query = query_without_cursor(request)
    return render(
        request,
        "runs/cases.html",
        {
            "run": run,
            "form": form,
            "page": page,
            "rows": rows,
            "filters": filters,
            "columns": columns,
            "column_names": FIXED_COLUMNS,
            "criteria": names,
            "counts": counts,
            "query": query,
            "repeats": run_repeats(run=run),
            "repeats_auto": run_repeats_auto(run=run),
        },
    )


@login_required
@require_GET
def run_cases_export_page(
    request: HttpRequest, run_id: int, export_format: str
) -> StreamingHttpResponse:
    """The case table's cases under its current filters, as a CSV or JSONL download."""
    run = get_run_or_404(request, run_id)
    form = CaseFilterForm(request.GET or None, criteria=[i.metric for i in run_criteria(run=run)])
    export = call(
        run_cases_export,
        user=request.user,
        run_id=run.pk,
        filters=form.case_filters(),
        export_format=export_format,
    )
    response = StreamingHttpResponse(export.lines, content_type=export.content_type)
    response["Content-Disposition"] = f'attachment; filename="{export.filename}"'
    return response


@login_required
@require_GET
def case_page(request: HttpRequest, run_id: int, case_id: str) -> HttpResponse:
    run = get_run_or_404(request, run_id)
    detail = call(case_detail, run=run, case_id=case_id)
    annotations = call(case_annotations, user=request.user, run_id=run.pk, case_id=case_id)
    own = annotation_of(annotations=annotations, author_name=request.user.get_username())
    initial = {} if own is None else {"rating": own.rating, "score": own.score}
    if own is not None:
        initial["comment"] = own.comment
    return render(
        request,
        "runs/case.html",
        {
            "run": run,
            "detail": detail,
            "repeats": case_repeats(run=run, case_id=case_id),
            "transcript": case_transcript(run=run, case_id=case_id),
            "annotations": annotations,
            "own_annotation": own,
            "annotation_form": AnnotationForm(initial=initial),
            "can_annotate": role_allows(user=request.user, project=run.project, role=Role.RUNNER),
        },
    )


@login_required
@require_POST
def annotate_page(request: HttpRequest, run_id: int) -> HttpResponse:
    """Save the signed-in person's rating, score and comment on one case of the run."""
    run = get_run_or_404(request, run_id)
    case_id = request.POST.get("case_id", "")
    form = AnnotationForm(request.POST)
    case_url = reverse("runs:case", args=[run.pk, case_id]) if case_id else None
    if not form.is_valid():
        problems = "; ".join(
            f"{name}: {' '.join(str(error) for error in errors)}"
            for name, errors in form.errors.items()
        )
        messages.error(request, f"The annotation was not saved — {problems}")
        return redirect(case_url or reverse("runs:cases", args=[run.pk]))
    data = form.cleaned_data
    values = AnnotationValues(rating=data["rating"], score=data["score"], comment=data["comment"])
    try:
        with domain_errors():
            case_annotation_save(user=request.user, run=run, case_id=case_id, values=values)
    except InvalidRequestError as exc:
        messages.error(request, f"The annotation was not saved: {exc}")
    else:
        messages.success(request, "Annotation saved.")
    return redirect(case_url or reverse("runs:cases", args=[run.pk]))
