"""The answer page's follow-up section: start a follow-up, follow its rewrite, ask (or drop) the standalone question."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from webapp.accounts.roles import RESEARCHER, role_required
from webapp.pages.answer_context import question_context
from webapp.qa import follow_ups
from webapp.qa.access import question_followable, question_or_404
from webapp.qa.models import FollowUpDraft, Question
from webapp.qa.services.admission import QuestionRejectedError


def _followable_question(request: HttpRequest, question_id: int) -> Question:
    """The caller's own answered question; anything else is reported as missing, as the answer page does."""
    return question_or_404(user=request.user, question_id=question_id, allowed=question_followable)


def _own_draft(request: HttpRequest, question: Question, draft_id: int) -> FollowUpDraft:
    user_id = request.user.pk
    draft = (
        None if user_id is None else FollowUpDraft.objects.filter(pk=draft_id, parent=question, user_id=user_id).first()
    )
    if draft is None:
        raise Http404("No such follow-up")
    return draft


def _page_with_error(request: HttpRequest, question: Question, status: int, **shown: Any) -> HttpResponse:
    """The answer page again, the message and what was typed kept in the follow-up section."""
    context = {**question_context(request, question, read_only=False), **shown}
    return render(request, "qa/question.html", context, status=status)


def _section_url(question: Question) -> str:
    return reverse("question", args=[question.pk]) + "#follow-up"


@require_POST
@role_required(RESEARCHER)
def follow_up_start(request: HttpRequest, question_id: int) -> HttpResponse:
    question = _followable_question(request, question_id)
    text = request.POST.get("follow_up", "")
    try:
        follow_ups.follow_up_draft_create(parent=question, user=request.user, text=text)
    except QuestionRejectedError as exc:
        return _page_with_error(request, question, exc.http_status, follow_up_error=str(exc), follow_up_text=text)
    return redirect(_section_url(question))


@require_GET
@role_required(RESEARCHER)
def follow_up_json(request: HttpRequest, question_id: int, draft_id: int) -> JsonResponse:
    """What the page polls while the rewrite runs."""
    draft = _own_draft(request, _followable_question(request, question_id), draft_id)
    return JsonResponse(
        {
            "id": draft.pk,
            "status": draft.status,
            "text": draft.text,
            "proposal": draft.proposal,
            "note": draft.note,
            "asked": draft.asked_id,
        }
    )


@require_POST
@role_required(RESEARCHER)
def follow_up_confirm(request: HttpRequest, question_id: int, draft_id: int) -> HttpResponse:
    """Ask the standalone question as edited, or drop the follow-up ("discard")."""
    question = _followable_question(request, question_id)
    draft = _own_draft(request, question, draft_id)
    if "discard" in request.POST:
        follow_ups.follow_up_discard(draft=draft)
        return redirect(_section_url(question))
    text = request.POST.get("question", "")
    try:
        asked = follow_ups.follow_up_ask(draft=draft, text=text, user=request.user)
    except QuestionRejectedError as exc:
        return _page_with_error(request, question, exc.http_status, follow_up_error=str(exc), follow_up_question=text)
    return redirect("question", question_id=asked.pk)
