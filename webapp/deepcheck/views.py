"""The deep check's page endpoints: start or run again, stop, its JSON (the page polls it), and a reviewer's flag on
a claim. Parse, check who asks, call a service or selector, respond."""

from __future__ import annotations

import json
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from webapp.accounts.roles import RESEARCHER, role_required
from webapp.deepcheck import selectors, services
from webapp.deepcheck.access import claims_flaggable, deep_check_readable, deep_check_runnable
from webapp.qa.access import question_or_404
from webapp.qa.models import Question
from webapp.qa.refusals import refusal_headers, refused_page
from webapp.qa.services.admission import QuestionRejectedError
from webapp.review.forms import FlagCreateForm
from webapp.review.services import FlagRejectedError

NOT_YOURS = "Only the person who asked, or an admin, may start or stop a deep check; reviewers read it and flag claims."


def _checkable_question(request: HttpRequest, question_id: int) -> Question:
    """A question whose deep check the caller may read; one they may not see is reported as missing, so ids reveal
    nothing."""
    return question_or_404(user=request.user, question_id=question_id, allowed=deep_check_readable)


def _wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


def _payload(question: Question) -> dict[str, Any]:
    return selectors.deep_check_payload(question=question, deep_check=selectors.deep_check_of(question=question))


def _plain_refusal(request: HttpRequest, message: str, status: int) -> HttpResponse:
    if _wants_json(request):
        return JsonResponse({"error": message}, status=status)
    return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")


@require_POST
@role_required(RESEARCHER)
def deep_check_start(request: HttpRequest, question_id: int) -> HttpResponse:
    """The page's Deep check button posts here (a plain form without JavaScript, fetch with it); `rerun` (the button
    once a check has run) starts a finished check again."""
    question = _checkable_question(request, question_id)
    if not deep_check_runnable(user=request.user, question=question):
        return _plain_refusal(request, NOT_YOURS, 403)
    try:
        services.deep_check_start(question=question, user=request.user, rerun=bool(request.POST.get("rerun")))
    except services.DeepCheckRejectedError as exc:
        return _plain_refusal(request, str(exc), exc.http_status)
    except QuestionRejectedError as exc:  # the hourly limit on model actions (429), a full queue (503)
        if _wants_json(request):
            return JsonResponse({"error": str(exc)}, status=exc.http_status, headers=refusal_headers(exc))
        return refused_page(request, exc, question=question, heading="The deep check was not started")
    if _wants_json(request):
        return JsonResponse(_payload(question), status=202)
    return redirect("question", question_id=question.pk)


@require_POST
@role_required(RESEARCHER)
def deep_check_stop(request: HttpRequest, question_id: int) -> HttpResponse:
    question = _checkable_question(request, question_id)
    if not deep_check_runnable(user=request.user, question=question):
        return _plain_refusal(request, NOT_YOURS, 403)
    check = selectors.deep_check_of(question=question)
    if check is None:
        raise Http404("This question has no deep check")
    services.deep_check_stop(deep_check_id=check.pk)
    if _wants_json(request):
        return JsonResponse(_payload(question))
    return redirect("question", question_id=question.pk)


@require_GET
@role_required(RESEARCHER)
def deep_check_json(request: HttpRequest, question_id: int) -> JsonResponse:
    return JsonResponse(_payload(_checkable_question(request, question_id)))


@require_POST
@role_required(RESEARCHER)
def claim_flag_create(request: HttpRequest, question_id: int) -> JsonResponse:
    """JSON in and out: {sentence, claim, reason, comment}."""
    question = _checkable_question(request, question_id)
    if not claims_flaggable(user=request.user, question=question):
        return JsonResponse({"error": "only reviewers flag the claims of a deep check"}, status=403)
    check = selectors.deep_check_of(question=question)
    try:
        data = json.loads(request.body or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError):
        data = None
    if not isinstance(data, dict):
        return JsonResponse({"error": "the body must be a JSON object"}, status=400)
    form = FlagCreateForm({key: data.get(key) for key in ("sentence", "reason", "comment") if key in data})
    claim = data.get("claim")
    if not form.is_valid():
        return JsonResponse({"error": form.first_error()}, status=400)
    if not isinstance(claim, int) or isinstance(claim, bool) or claim < 0:
        return JsonResponse({"error": "claim: say which claim to flag (its index, from 0)"}, status=400)
    if check is None:
        return JsonResponse({"error": "this question has no deep check"}, status=400)
    try:
        flagged = services.claim_flag_create(
            deep_check=check,
            sentence_position=form.cleaned_data["sentence"],
            claim_index=claim,
            reason=form.cleaned_data["reason"],
            comment=form.cleaned_data["comment"],
            user=request.user,
        )
    except FlagRejectedError as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    return JsonResponse(
        {"id": flagged.flag_id, "sentence": flagged.sentence_position, "claim": flagged.claim_index,
         "message": "Flag sent to the review queue"},
        status=201,
    )  # fmt: skip
