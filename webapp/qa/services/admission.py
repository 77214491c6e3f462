"""Taking a question in: validate it, apply the person's hourly limit and the queue's load valve, store it with the
settings it will be answered with, and hand it to the workers once stored."""

from __future__ import annotations

import math
from typing import TypeVar

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import transaction
from django.utils import timezone
from pydantic import BaseModel, ValidationError

from indexer.hybrid import HybridSettings
from webapp.qa.models import Question
from webapp.qa.pipeline import RetrievalFilters, default_pipeline_settings
from webapp.qa.queue import questions_unfinished_count
from webapp.qa.rate_limit import question_ask_again_at
from webapp.qa.services.publishing import question_enqueue

Stored = TypeVar("Stored", bound=BaseModel)


class QuestionRejectedError(ValueError):
    """The question cannot be asked as given; the message says why, for the person who typed it."""

    http_status = 400


class QueueFullError(QuestionRejectedError):
    """Too many questions are waiting or running: refused now, cleanly, rather than answered in an hour."""

    http_status = 503


def _queue_check() -> None:
    # Two requests at the same instant may both pass and overshoot the limit by one each: it is a load valve, not
    # an invariant, so it is not worth a table lock on every question.
    limit = settings.VERIMED.limits.max_queued_questions
    if limit and (waiting := questions_unfinished_count()) >= limit:
        waiting_text = "1 question is" if waiting == 1 else f"{waiting:,} questions are"
        raise QueueFullError(f"The service is busy: {waiting_text} waiting. Please try again in a few minutes.")


class QuestionRateLimitedError(QuestionRejectedError):
    """This person has asked `VERIMED_QUESTIONS_PER_HOUR` questions in the last hour; others are unaffected."""

    http_status = 429

    def __init__(self, message: str, *, retry_after_seconds: int) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds


def _rate_check(user: AbstractBaseUser | AnonymousUser | None) -> None:
    per_hour = settings.VERIMED.limits.questions_per_hour
    if not per_hour or not isinstance(user, User):  # 0 turns it off; command-line questions have no user
        return
    now = timezone.now()
    again = question_ask_again_at(user_id=user.pk, per_hour=per_hour, now=now)
    if again is not None:
        wait = max(1, math.ceil((again - now).total_seconds()))
        raise QuestionRateLimitedError(
            f"You have asked {per_hour} questions in the last hour, the most allowed. You can ask again at "
            f"{again:%H:%M} UTC (in {math.ceil(wait / 60)} min).",
            retry_after_seconds=wait,
        )


def question_rate_check(*, user: AbstractBaseUser | AnonymousUser | None) -> None:
    """Raise QuestionRateLimitedError when `user` may not ask now (a follow-up's rewrite checks before model time)."""
    _rate_check(user)


def question_max_chars() -> int:
    """The longest question accepted, in characters; the ask form's text box and the API take it from here."""
    return int(settings.VERIMED.limits.max_question_chars)


def question_validate(*, text: str) -> str:
    cleaned = text.strip()
    if not cleaned:
        raise QuestionRejectedError("Please type a question.")
    limit = question_max_chars()
    if len(cleaned) > limit:
        raise QuestionRejectedError(f"Questions are limited to {limit:,} characters; this one has {len(cleaned):,}.")
    return cleaned


def question_create(
    *,
    text: str,
    user: AbstractBaseUser | AnonymousUser | None = None,
    enqueue: bool = True,
    filters: RetrievalFilters | None = None,
    retrieval: HybridSettings | None = None,
    parent: Question | None = None,
) -> Question:
    """Store a question with the settings it will be answered with; the site's defaults fill what is not given. A
    follow-up of `parent` joins its thread and searches as `parent` did, unless given other search settings."""
    cleaned = question_validate(text=text)
    _rate_check(user)
    if enqueue:
        _queue_check()
    if parent is not None:
        filters = filters or _stored_or_none(RetrievalFilters, parent.settings.get("filters"))
        retrieval = retrieval or _stored_or_none(HybridSettings, parent.settings.get("retrieval"))
    pipeline = default_pipeline_settings()
    if filters is not None:
        pipeline = pipeline.model_copy(update={"filters": filters})
    if retrieval is not None:
        pipeline = pipeline.model_copy(update={"retrieval": retrieval})
    question = Question.objects.create(
        text=cleaned,
        user=user if isinstance(user, User) else None,
        settings=pipeline.model_dump(mode="json"),
        parent=parent,
        thread_id=None if parent is None else parent.thread_id or parent.pk,
    )
    if enqueue:
        transaction.on_commit(lambda: question_enqueue(question_id=question.pk))
    return question


def _stored_or_none(model: type[Stored], stored: object) -> Stored | None:
    """Settings stored with an earlier question, or None (the defaults) where the fields have changed since."""
    try:
        return model.model_validate(stored) if stored is not None else None
    except ValidationError:
        return None
