"""The answer page and the JSON it polls: a question's answer with what watch adds to it (whether the caller watches
it, its re-checks). Parse, check who asks, call the selectors, render."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from webapp.accounts.roles import RESEARCHER, role_required
from webapp.pages.answer_context import question_context
from webapp.qa import selectors
from webapp.qa.access import question_or_404
from webapp.watch.selectors import question_watch_payload


@require_GET
@role_required(RESEARCHER)
def question_page(request: HttpRequest, question_id: int) -> HttpResponse:
    question = question_or_404(user=request.user, question_id=question_id)
    return render(request, "qa/question.html", question_context(request, question, read_only=False))


@require_GET
@role_required(RESEARCHER)
def question_json(request: HttpRequest, question_id: int) -> JsonResponse:
    question = question_or_404(user=request.user, question_id=question_id)
    # Whether the caller watches it, and its re-checks (webapp/watch): the API's question carries the same.
    watch = question_watch_payload(question=question, user=request.user)
    return JsonResponse({**selectors.question_payload(question, viewer_id=request.user.pk), **watch})
