"""How many questions, and how much model work in all, one person may start per hour: counted from the Question
table itself and, for the other model work (follow-up rewrites, deep checks, re-checks), from its ModelAction rows.

The table is shared by every web process and worker, so the count is exact without a shared cache (the embedded
profile's cache is per-process memory). The window slides: a question stops counting one hour after it was asked.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Final

from webapp.qa.models import ModelAction, Question

WINDOW: Final = timedelta(hours=1)


def question_ask_again_at(*, user_id: int, per_hour: int, now: datetime) -> datetime | None:
    """None while the person is under the limit; otherwise when the oldest question that keeps them at it leaves
    the window. One indexed query, whatever the person's history."""
    recent = (
        Question.objects.filter(user_id=user_id, created_at__gt=now - WINDOW)
        .order_by("-created_at")
        .values_list("created_at", flat=True)
    )
    # The per_hour-th most recent question: while it is inside the window, per_hour questions are.
    oldest_counted = list(recent[per_hour - 1 : per_hour])
    return oldest_counted[0] + WINDOW if oldest_counted else None


def model_action_again_at(*, user_id: int, per_hour: int, now: datetime) -> datetime | None:
    """As `question_ask_again_at`, over the person's questions and their other model actions together. Two indexed
    queries of at most `per_hour` rows each, whatever the person's history."""
    since = now - WINDOW
    questions = Question.objects.filter(user_id=user_id, created_at__gt=since).order_by("-created_at")
    actions = ModelAction.objects.filter(user_id=user_id, created_at__gt=since).order_by("-created_at")
    recent = sorted(
        [
            *questions.values_list("created_at", flat=True)[:per_hour],
            *actions.values_list("created_at", flat=True)[:per_hour],
        ],
        reverse=True,
    )
    return recent[per_hour - 1] + WINDOW if len(recent) >= per_hour else None
