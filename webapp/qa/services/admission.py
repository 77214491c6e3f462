"""Taking a question in: validate it, apply the person's hourly limits and the queue's load valve, store it with the
settings it will be answered with, and hand it to the workers once stored.

The same rule admits every other kind of model work (a follow-up's rewrite, a deep check, a re-check on request):
`model_work_admit` applies the person's hourly limit on model actions and the queue valve, and records the action.
Every refusal is a QuestionRejectedError whose `http_status` (and `retry_after_seconds`, where waiting helps) the
pages and the API answer with."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime
from typing import TypeVar

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import transaction
from django.utils import timezone
from django.utils.text import get_text_list
from pydantic import BaseModel, ValidationError

from indexer.hybrid import HybridSettings
from webapp.library.selectors import documents_awaiting_index
from webapp.qa.models import ModelAction, Question, question_lost_before
from webapp.qa.pipeline import RetrievalFilters, default_pipeline_settings
from webapp.qa.queue import QueuedWork, work_unfinished_counts
from webapp.qa.rate_limit import WINDOW, model_action_again_at, question_ask_again_at
from webapp.qa.services.ending import question_fail_if_lost
from webapp.qa.services.publishing import question_enqueue

Stored = TypeVar("Stored", bound=BaseModel)


class QuestionRejectedError(ValueError):
    """The question (or other model work) cannot be started as given; the message says why, for the person who
    asked for it."""

    http_status = 400
    retry_after_seconds: int | None = None  # where set, the API's `Retry-After`


class QueueFullError(QuestionRejectedError):
    """Too many questions and deep checks are waiting or running: refused now, cleanly, rather than answered in an
    hour."""

    http_status = 503
    retry_after_seconds = 60


def _queue_check() -> None:
    # Two requests at the same instant may both pass and overshoot the limit by one each: it is a load valve, not
    # an invariant, so it is not worth a table lock on every question.
    limit = settings.VERIMED.limits.max_queued_questions
    if not limit:
        return
    counts = work_unfinished_counts()
    waiting = sum(count for count, _, _ in counts)
    if waiting >= limit:
        # Only the kinds that are waiting are named: "2 questions are", "2 questions and 1 deep check are".
        named = [f"{count:,} {singular if count == 1 else plural}" for count, singular, plural in counts if count]
        verb = "is" if waiting == 1 else "are"
        raise QueueFullError(
            f"The service is busy: {get_text_list(named, 'and')} {verb} waiting. Please try again in a few minutes."
        )


def queue_full_reason() -> str | None:
    """None while the queue valve admits more work; else why not, in the words a refusal uses."""
    try:
        _queue_check()
    except QueueFullError as exc:
        return str(exc)
    return None


# A library document's indexing holds an embed worker, which the embedded profile's one worker shares with questions.
LIBRARY_INDEXING = QueuedWork(
    singular="library document to index",
    plural="library documents to index",
    unfinished=lambda: documents_awaiting_index(queued_since=question_lost_before()),
    queued_at="index_queued_at",
    moved_at="index_queued_at",
)


class QuestionRateLimitedError(QuestionRejectedError):
    """This person has asked `VERIMED_QUESTIONS_PER_HOUR` questions, or started `VERIMED_MODEL_ACTIONS_PER_HOUR`
    model actions, in the last hour; others are unaffected."""

    http_status = 429

    def __init__(self, message: str, *, retry_after_seconds: int) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds


def _hourly_limit_check(
    user: AbstractBaseUser | AnonymousUser | None,
    *,
    per_hour: int,
    again_at: Callable[..., datetime | None],
    done: str,
    resume: str,
) -> None:
    """Refuse when `user` has reached `per_hour` in the sliding hour `again_at` counts; `done` and `resume` word it."""
    if not per_hour or not isinstance(user, User):  # 0 turns it off; the command line's work has no user
        return
    now = timezone.now()
    again = again_at(user_id=user.pk, per_hour=per_hour, now=now)
    if again is not None:
        wait = max(1, math.ceil((again - now).total_seconds()))
        raise QuestionRateLimitedError(
            f"You have {done} in the last hour, the most allowed. You can {resume} at "
            f"{again:%H:%M} UTC (in {math.ceil(wait / 60)} min).",
            retry_after_seconds=wait,
        )


def _rate_check(user: AbstractBaseUser | AnonymousUser | None) -> None:
    per_hour = settings.VERIMED.limits.questions_per_hour
    _hourly_limit_check(
        user,
        per_hour=per_hour,
        again_at=question_ask_again_at,
        done=f"asked {per_hour} questions",
        resume="ask again",
    )


def _model_actions_check(user: AbstractBaseUser | AnonymousUser | None) -> None:
    per_hour = settings.VERIMED.limits.model_actions_per_hour
    _hourly_limit_check(
        user,
        per_hour=per_hour,
        again_at=model_action_again_at,
        done=f"started {per_hour} questions, follow-up rewrites, deep checks and re-checks",
        resume="start another",
    )


def _hold_person(user: AbstractBaseUser | AnonymousUser | None) -> None:
    """Lock the person's row until the enclosing transaction ends, so one person's admissions take turns.

    Each hourly limit counts rows and then inserts one: without the lock, requests sent in parallel all count the
    same rows and all pass, past the limit (the library upload holds the same lock for its room check). Call inside
    a transaction, before counting. SQLite takes no row locks, but it lets only one transaction write at a time.
    """
    if isinstance(user, User):
        list(User.objects.select_for_update().filter(pk=user.pk).values_list("pk"))


def question_rate_check(*, user: AbstractBaseUser | AnonymousUser | None) -> None:
    """Raise QuestionRateLimitedError when `user` may not ask now (a follow-up's rewrite checks before model time)."""
    _rate_check(user)


def model_work_admit(
    *, user: AbstractBaseUser | AnonymousUser | None, kind: ModelAction.Kind, queued: bool = True
) -> int | None:
    """Admit model work other than a question (which `question_create` admits): the person's hourly limit on model
    actions and, for work `queued` for the workers, the queue valve; then record it, for the hourly limit. Call it
    inside the transaction that stores the work: a refusal raises (QuestionRateLimitedError, QueueFullError) before
    anything is stored, and a rollback un-records it. Returns the recorded action's id (None for no signed-in
    person), for `model_work_withdraw` when the work could not be queued after all."""
    with transaction.atomic():  # a savepoint in the caller's transaction: the lock lasts until that one ends
        _hold_person(user)
        _model_actions_check(user)
        if queued:
            _queue_check()
        if not isinstance(user, User):
            return None
        # Rows past the window count for nothing any more: each person's are cleared as they add one.
        ModelAction.objects.filter(user=user, created_at__lte=timezone.now() - WINDOW).delete()
        return int(ModelAction.objects.create(user=user, kind=kind).pk)


def model_work_withdraw(*, action_id: int | None) -> None:
    """Un-count an admitted action whose work never started (the broker could not take it)."""
    if action_id is not None:
        ModelAction.objects.filter(pk=action_id).delete()


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
    if parent is not None:
        filters = filters or _stored_or_none(RetrievalFilters, parent.settings.get("filters"))
        retrieval = retrieval or _stored_or_none(HybridSettings, parent.settings.get("retrieval"))
    pipeline = default_pipeline_settings()
    if filters is not None:
        pipeline = pipeline.model_copy(update={"filters": filters})
    if retrieval is not None:
        pipeline = pipeline.model_copy(update={"retrieval": retrieval})
    with transaction.atomic():
        _hold_person(user)  # the counts below and the row they count go in together
        _rate_check(user)
        _model_actions_check(user)
        if enqueue:
            _queue_check()
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


def question_ask_again(*, question: Question, user: AbstractBaseUser | AnonymousUser | None) -> Question:
    """Ask a question that failed, was stopped or was lost once more, as a new question with the same text, search
    settings and thread, through the same limits as any question. A lost original is marked failed for good first,
    so a late copy of its task cannot answer it as well."""
    if not (question.lost or question.status in (Question.Status.FAILED, Question.Status.CANCELLED)):
        raise QuestionRejectedError("Only a question that failed or was stopped can be asked again.")
    question_fail_if_lost(question)
    return question_create(
        text=question.text,
        user=user,
        filters=_stored_or_none(RetrievalFilters, question.settings.get("filters")),
        retrieval=_stored_or_none(HybridSettings, question.settings.get("retrieval")),
        parent=question.parent,
    )


def _stored_or_none(model: type[Stored], stored: object) -> Stored | None:
    """Settings stored with an earlier question, or None (the defaults) where the fields have changed since."""
    try:
        return model.model_validate(stored) if stored is not None else None
    except ValidationError:
        return None
