"""Reads the API needs that no app offers yet."""

from __future__ import annotations

from django.db.models import QuerySet

from webapp.accounts.roles import REVIEWER, AnyUser, user_has_role
from webapp.review.models import Flag


def flags_visible(*, user: AnyUser) -> QuerySet[Flag]:
    """Reviewers and admins see every flag, to work the queue; anyone else sees the flags they raised."""
    flags = Flag.objects.select_related("sentence", "flagged_by", "resolved_by").order_by("-created_at", "-pk")
    if user_has_role(user, REVIEWER):
        return flags
    if not user.is_authenticated:
        return flags.none()
    return flags.filter(flagged_by_id=user.pk)
