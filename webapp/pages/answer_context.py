"""What the answer page renders: the answer, its links and exports, and its follow-up section. The owner's page, the
shared (read-only) page and the follow-up views that show it again with a message all build it here."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.urls import reverse

from indexer.study_design import DESIGNS
from webapp.qa.access import question_cancellable, question_followable, question_shareable, question_viewable
from webapp.qa.bottom_line_display import bottom_line_context
from webapp.qa.models import Question
from webapp.qa.search_options import library_only, search_summary
from webapp.qa.services.admission import question_max_chars
from webapp.qa.threads import follow_up_draft_open, question_ancestors


def question_context(request: HttpRequest, question: Question, *, read_only: bool) -> dict[str, Any]:
    """What the answer page needs; the shared view renders the same page read-only, through its own URLs."""
    owner = not read_only and question_shareable(user=request.user, question=question)
    if read_only:
        token = question.share_token or ""
        json_url = reverse("question-shared-json", args=[token])
        exports = {kind: reverse(f"shared-export-{kind}", args=[token]) for kind in ("md", "bib", "ris")}
    else:
        json_url = reverse("question-json", args=[question.pk])
        exports = {kind: reverse(f"question-export-{kind}", args=[question.pk]) for kind in ("md", "bib", "ris")}
    share_url = ""
    if owner and question.share_token:
        share_url = request.build_absolute_uri(reverse("question-shared", args=[question.share_token]))
    return {
        "question": question,
        "read_only": read_only,
        "json_url": json_url,
        "exports": exports,
        "search_summary": search_summary(question.settings),
        "library_only": library_only(question.settings),
        "can_cancel": not read_only and question_cancellable(user=request.user, question=question),
        "can_share": owner,
        "share_url": share_url,
        "study_designs": DESIGNS,  # the badge legend
        **bottom_line_context(question.consensus),
        **follow_up_context(request, question, read_only=read_only),
    }


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
        "max_question_chars": question_max_chars(),
    }


def _viewable(request: HttpRequest, question: Question) -> bool:
    return question_viewable(user=request.user, question=question)
