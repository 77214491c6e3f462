"""Flagging from the answer page, the reviewers' queue and flag pages, and the training-data export."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from webapp.accounts.roles import RESEARCHER, REVIEWER, role_required
from webapp.qa.access import question_viewable
from webapp.qa.models import Question
from webapp.review import exports, selectors, services
from webapp.review.forms import FlagCloseForm, FlagCreateForm, FlagFilterForm
from webapp.review.models import Flag

PAGE_SIZE = 50


def _flag_request_data(request: HttpRequest) -> dict[str, Any] | None:
    if request.content_type != "application/json":
        return request.POST.dict()
    try:
        data = json.loads(request.body or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


@require_POST
@role_required(RESEARCHER)
def flag_create(request: HttpRequest, question_id: int) -> JsonResponse:
    question = Question.objects.filter(pk=question_id).first()
    # A question the caller may not see is reported as missing, so ids reveal nothing.
    if question is None or not question_viewable(user=request.user, question=question):
        return JsonResponse({"error": "no such question"}, status=404)
    data = _flag_request_data(request)
    if data is None:
        return JsonResponse({"error": "the body must be a JSON object"}, status=400)
    form = FlagCreateForm(data)
    if not form.is_valid():
        return JsonResponse({"error": form.first_error()}, status=400)
    try:
        flag = services.flag_create(
            question=question,
            sentence_position=form.cleaned_data["sentence"],
            reason=form.cleaned_data["reason"],
            comment=form.cleaned_data["comment"],
            pmid=form.cleaned_data["pmid"],
            user=request.user,
        )
    except services.FlagRejectedError as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    return JsonResponse(
        {
            "id": flag.pk,
            "sentence": form.cleaned_data["sentence"],
            "status": flag.status,
            "message": "Flag sent to the review queue",
        },
        status=201,
    )


@require_GET
@role_required(REVIEWER)
def review_queue(request: HttpRequest) -> HttpResponse:
    form = FlagFilterForm.from_query(request.GET)
    valid = form.is_valid()
    flags = selectors.flags_filtered(filters=form.filters()) if valid else Flag.objects.none()
    page = Paginator(flags, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "form": form,
        "page": page,
        "query": query.urlencode(),
        "agreement": selectors.flag_agreement(),
    }
    return render(request, "review/queue.html", context, status=200 if valid else 400)


@require_http_methods(["GET", "POST"])
@role_required(REVIEWER)
def flag_page(request: HttpRequest, flag_id: int) -> HttpResponse:
    try:
        detail = selectors.flag_detail(flag_id=flag_id)
    except Flag.DoesNotExist as exc:
        raise Http404("No such flag") from exc
    form = FlagCloseForm(request.POST or None)
    error = ""
    if request.method == "POST":
        if form.is_valid():
            try:
                flag = services.flag_close(
                    flag_id=flag_id,
                    status=form.cleaned_data["status"],
                    reviewer_label=form.cleaned_data["reviewer_label"],
                    note=form.cleaned_data["note"],
                    user=request.user,
                )
            except services.FlagRejectedError as exc:
                error = str(exc)
            else:
                messages.success(request, f"Flag {flag.pk} {flag.status}.")
                return redirect("review-queue")
        else:
            error = "check the fields below"
    context = {"detail": detail, "flag": detail.flag, "form": form, "error": error}
    return render(request, "review/flag.html", context, status=400 if error else 200)


def _jsonl_response(body: str, filename: str) -> HttpResponse:
    response = HttpResponse(body, content_type="application/x-ndjson; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@require_GET
@role_required(REVIEWER)
def export_claims(request: HttpRequest) -> HttpResponse:
    return _jsonl_response(exports.json_lines(exports.flag_training_export().claims), "claims.jsonl")


@require_GET
@role_required(REVIEWER)
def export_corpus(request: HttpRequest) -> HttpResponse:
    return _jsonl_response(exports.json_lines(exports.flag_training_export().corpus), "corpus.jsonl")


@require_GET
@role_required(REVIEWER)
def export_training_rows(request: HttpRequest) -> HttpResponse:
    return _jsonl_response(exports.json_lines(exports.flag_training_export().rows), "flags.jsonl")
