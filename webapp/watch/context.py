"""The header's unread-notification count, on every page a signed-in person sees."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from webapp.watch.selectors import notifications_unread_count


def notifications(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}  # no query for visitors who are not signed in
    return {"notifications_unread": notifications_unread_count(user_id=user.pk)}
