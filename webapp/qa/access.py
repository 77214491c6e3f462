"""Who may see and act on a question. Owners see their own; reviewers and admins see all, to review them.

The rules are public: the pages, the API, watch and the deep check build theirs on them, and load a question through
`question_or_404`, so a question the caller may not see, or not act on, is missing to every one of them alike.
"""

from __future__ import annotations

from typing import Protocol

from django.db.models import QuerySet
from django.http import Http404

from webapp.accounts.roles import ADMIN, RESEARCHER, REVIEWER, AnyUser, user_has_role
from webapp.qa.models import Question
from webapp.qa.selectors import question_get


class QuestionRule(Protocol):
    def __call__(self, *, user: AnyUser, question: Question) -> bool: ...


def question_viewable(*, user: AnyUser, question: Question) -> bool:
    if user_has_role(user, REVIEWER):
        return True
    return user_has_role(user, RESEARCHER) and question.user_id is not None and question.user_id == user.pk


def question_cancellable(*, user: AnyUser, question: Question) -> bool:
    """Only the person who asked, or an admin, may stop a question; reviewers only read."""
    if user_has_role(user, ADMIN):
        return True
    return question.user_id is not None and question.user_id == user.pk


def questions_visible(*, user: AnyUser) -> QuerySet[Question]:
    if user_has_role(user, REVIEWER):
        return Question.objects.all()
    if user_has_role(user, RESEARCHER) and user.pk is not None:
        return Question.objects.filter(user__pk=user.pk)
    return Question.objects.none()


def question_shareable(*, user: AnyUser, question: Question) -> bool:
    """Only the person who asked hands out read-only links to their question."""
    return question.user_id is not None and question.user_id == user.pk and user_has_role(user, RESEARCHER)


def question_followable(*, user: AnyUser, question: Question) -> bool:
    """Only the person who asked follows up an answered question: the follow-up joins their thread and is theirs."""
    return question.status == Question.Status.DONE and question_shareable(user=user, question=question)


def question_or_404(*, user: AnyUser, question_id: int, allowed: QuestionRule = question_viewable) -> Question:
    """The question, with its answer, when `allowed` lets `user` have it (by default: see it). Any other is reported
    as missing (Http404; the API answers it as its own 404), so ids reveal nothing."""
    try:
        question = question_get(question_id=question_id)
    except Question.DoesNotExist as exc:
        raise Http404("No such question.") from exc
    if not allowed(user=user, question=question):
        raise Http404("No such question.")
    return question
