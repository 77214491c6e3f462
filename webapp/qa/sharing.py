"""Read-only share links: the owner makes one (or revokes it); anyone signed in who has the link can read the answer."""

from __future__ import annotations

import secrets

from django.db import transaction

from webapp.qa.models import Question

# 32 random bytes: guessing a live token is out of reach, and the URL stays short enough to paste.
TOKEN_BYTES = 32


def question_share(*, question_id: int) -> Question:
    """Give the question a share token; sharing again keeps the link already handed out."""
    with transaction.atomic():
        question = Question.objects.select_for_update().get(pk=question_id)
        if not question.share_token:
            question.share_token = secrets.token_urlsafe(TOKEN_BYTES)
            question.save(update_fields=["share_token", "updated_at"])
    return question


def question_unshare(*, question_id: int) -> Question:
    """Revoke the link: the old token stops working at once; sharing again makes a new one."""
    question = Question.objects.get(pk=question_id)
    question.share_token = None
    question.save(update_fields=["share_token", "updated_at"])
    return question
