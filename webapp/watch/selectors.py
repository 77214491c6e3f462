"""Read-side: whether someone watches an answer, its re-checks as the page and the API show them, notifications."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from webapp.accounts.roles import AnyUser
from webapp.qa.models import Question
from webapp.watch.models import Notification, Recheck, Watch

# The newest re-checks a question's JSON carries: a daily sync adds one a day.
RECHECKS_LISTED = 50


def question_watched(*, question: Question, user: AnyUser) -> bool:
    if not user.is_authenticated:
        return False
    return Watch.objects.filter(question=question, user_id=user.pk).exists()


def question_rechecks(*, question: Question) -> QuerySet[Recheck]:
    """Newest first."""
    return Recheck.objects.filter(question=question).order_by("-at", "-pk")


def recheck_payload(recheck: Recheck) -> dict[str, Any]:
    return {
        "at": recheck.at.isoformat(),
        "trigger": recheck.trigger,
        "summary": recheck.summary,
        "changes": recheck.changes,
    }


def question_watch_payload(*, question: Question, user: AnyUser) -> dict[str, Any]:
    """What the question's JSON (page and API) adds for the person asking for it."""
    return {
        "watched": question_watched(question=question, user=user),
        "rechecks": [recheck_payload(recheck) for recheck in question_rechecks(question=question)[:RECHECKS_LISTED]],
    }


def notifications_of(*, user: AnyUser) -> QuerySet[Notification]:
    """The person's own notifications, newest first, with what the page and the API show of each."""
    return (
        Notification.objects.filter(user_id=user.pk or 0)  # nobody's for a visitor (the views let none this far)
        .select_related("question", "recheck")
        .defer("recheck__state", "recheck__changes")
        .order_by("-created_at", "-pk")
    )


def notifications_unread_count(*, user_id: int) -> int:
    """One COUNT on the (user, read_at) index: every page's header shows it."""
    return Notification.objects.filter(user_id=user_id, read_at__isnull=True).count()


def notification_payload(notification: Notification) -> dict[str, Any]:
    return {
        "id": notification.pk,
        "question": notification.question_id,
        "question_text": notification.question.text,
        "created_at": notification.created_at.isoformat(),
        "unread": notification.unread,
        "read_at": notification.read_at.isoformat() if notification.read_at else None,
        "summary": notification.recheck.summary,
        "rechecked_at": notification.recheck.at.isoformat(),
    }
