"""The answer page's follow-up section: start a follow-up, follow its rewrite, ask (or drop) the standalone question."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from webapp.accounts.roles import RESEARCHER, role_required
from webapp.qa import follow_ups, services
from webapp.qa.access import question_followable, question_viewable
from webapp.qa.models import FollowUpDraft, Question
from webapp.qa.threads import follow_up_draft_open, question_ancestors


def follow_up_context(request: HttpRequest, question: Question, *, read_only: bool) -> dict[str, Any]:
    """The section's part of the answer page's context: the thread's links and, for the owner, the follow-up form or
    the follow-up being rewritten. A shared (read-only) page shows none of it: its reader cannot open the others."""
    if read_only:
        return {"thread_earlier": [], "thread_follow_ups": [], "can_follow_up": False, "follow_up_draft": None}
    can_follow_up = question_followable(user=request.user, question=question)
    return {
        "thread_earlier": [row for row in question_ancestors(question=question) if _viewable(request, row)],
        "thread_follow_ups": [
            row for row in question.follow_ups.order_by("created_at", "pk") if _viewable(request, row)
        ],
        "can_follow_up": can_follow_up,
        "follow_up_draft": follow_up_draft_open(parent=question, user_id=request.user.pk) if can_follow_up else None,
        "max_question_chars": services.question_max_chars(),
    }


def _viewable(request: HttpRequest, question: Question) -> bool:
    return question_viewable(user=request.user, question=question)


def _followable_question(request: HttpRequest, question_id: int) -> Question:
    """The caller's own answered question; anything else is reported as missing, as the answer page does."""
    question = Question.objects.filter(pk=question_id).first()
    if question is None or not question_followable(user=request.user, question=question):
        raise Http404("No such question")
    return question


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
    from webapp.qa.views import question_context  # the page's own context; views imports this module

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
    except services.QuestionRejectedError as exc:
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
    except services.QuestionRejectedError as exc:
        return _page_with_error(request, question, exc.http_status, follow_up_error=str(exc), follow_up_question=text)
    return redirect("question", question_id=asked.pk)
