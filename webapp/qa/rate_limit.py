"""How many questions one person may ask per hour: counted from the Question table itself.

The table is shared by every web process and worker, so the count is exact without a shared cache (the embedded
profile's cache is per-process memory). The window slides: a question stops counting one hour after it was asked.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Final

from webapp.qa.models import Question

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
