"""Who may see and act on a question. Owners see their own; reviewers and admins see all, to review them."""

from __future__ import annotations

from django.db.models import QuerySet

from webapp.accounts.roles import ADMIN, RESEARCHER, REVIEWER, AnyUser, user_has_role
from webapp.qa.models import Question


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
