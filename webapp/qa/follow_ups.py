"""Follow-up questions: start one on an answer, rewrite it off the web process, and ask it once confirmed.

A follow-up ("Is it safe in children?") is rewritten by the model into a standalone question, because retrieval reads
only the question. The rewrite is a proposal: the person sees it, may edit it, and only their "Ask" creates the
question (through `question_create`, so validation, rate limits and the queue valve are the same as for any question).
Until the rewrite comes, or when it fails, the proposal is their own text with the question it follows, so they can
always edit and ask.
"""

from __future__ import annotations

import dataclasses

from celery import signature
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction

from generator.follow_up import NOTE_PREFIX, FollowUpRewrite, fallback_question, standalone_question
from generator.registry import build_llm, build_token_counter
from webapp.qa.llm import llm_settings_for
from webapp.qa.models import FollowUpDraft, ModelAction, Question
from webapp.qa.pipeline import default_pipeline_settings
from webapp.qa.services.admission import (
    QuestionRejectedError,
    model_work_admit,
    question_create,
    question_max_chars,
    question_rate_check,
)
from webapp.qa.threads import thread_turns
from webapp.task_publishing import task_publish_or_record

# The person is waiting at the page with an editable proposal: a rewrite slower than this is not worth waiting for
# (the 1.5B model writes one in a few seconds), so the client gives up early and is not retried.
REWRITE_TIMEOUT_SECONDS = 60.0


def follow_up_draft_create(
    *, parent: Question, user: AbstractBaseUser | AnonymousUser, text: str, enqueue: bool = True
) -> FollowUpDraft:
    """Store the follow-up as typed, with the fallback as its proposal, and queue its rewrite. Who may follow up is
    the caller's check (`qa.access.question_followable`). A person who may not ask now (the hourly limit on
    questions) is told before any model time is spent; the rewrite itself is model work, admitted as any is (the
    hourly limit on model actions, the queue valve), so each new follow-up counts once. A follow-up over the length
    limit is kept, for them to shorten."""
    cleaned = text.strip()
    if not cleaned:
        raise QuestionRejectedError("Please type a follow-up question.")
    user_id = user.pk
    if user_id is None:
        raise QuestionRejectedError("Please sign in to ask a follow-up.")
    question_rate_check(user=user)
    with transaction.atomic():
        if enqueue:
            model_work_admit(user=user, kind=ModelAction.Kind.REWRITE)
        # One draft per person and answer: writing a new follow-up replaces the one not asked yet.
        FollowUpDraft.objects.filter(parent=parent, user_id=user_id).exclude(status=FollowUpDraft.Status.ASKED).delete()
        draft = FollowUpDraft.objects.create(
            parent=parent,
            user_id=user_id,
            text=cleaned,
            proposal=fallback_question(cleaned, previous=parent.text, max_chars=question_max_chars()),
        )
        if enqueue:
            transaction.on_commit(lambda: follow_up_rewrite_enqueue(draft_id=draft.pk))
    return draft


def follow_up_rewrite_enqueue(*, draft_id: int) -> bool:
    """Hand the rewrite to the `llm` workers; if the broker cannot take it, the draft keeps its fallback, saying why."""
    return task_publish_or_record(
        signature("qa.follow_up_rewrite", args=(draft_id,)),
        what=f"the rewrite of follow-up {draft_id}",
        record_unreachable=lambda: follow_up_rewrite_failed(draft_id=draft_id, reason="the task queue is unreachable"),
    )


def follow_up_rewrite(*, draft_id: int) -> None:
    """Rewrite the follow-up with the configured model and store the proposal (or the fallback and its note). A draft
    replaced or asked meanwhile is left alone."""
    draft = FollowUpDraft.objects.select_related("parent").filter(pk=draft_id).first()
    if draft is None or draft.status != FollowUpDraft.Status.REWRITING:
        return
    configured = llm_settings_for(default_pipeline_settings())
    llm_settings = dataclasses.replace(
        configured, timeout_seconds=min(REWRITE_TIMEOUT_SECONDS, configured.timeout_seconds), max_retries=0
    )
    llm = build_llm(llm_settings)
    rewrite = standalone_question(
        llm,
        turns=thread_turns(question=draft.parent),
        follow_up=draft.text,
        counter=build_token_counter(llm_settings),
        max_chars=question_max_chars(),
    )
    _store_rewrite(draft_id, rewrite, model=llm.model_id)


def _store_rewrite(draft_id: int, rewrite: FollowUpRewrite, *, model: str = "") -> None:
    status = FollowUpDraft.Status.PROPOSED if rewrite.rewritten else FollowUpDraft.Status.FALLBACK
    FollowUpDraft.objects.filter(pk=draft_id, status=FollowUpDraft.Status.REWRITING).update(
        status=status, proposal=rewrite.question, note=rewrite.note, model=model
    )


def follow_up_rewrite_failed(*, draft_id: int, reason: str) -> None:
    """The rewrite did not run to its end (queue down, time limit, a bug): the draft offers the fallback, saying why."""
    draft = FollowUpDraft.objects.select_related("parent").filter(pk=draft_id).first()
    if draft is None:
        return
    question = fallback_question(draft.text, previous=draft.parent.text, max_chars=question_max_chars())
    _store_rewrite(
        draft_id, FollowUpRewrite(question=question, rewritten=False, note=NOTE_PREFIX + reason.rstrip(". "))
    )


def follow_up_ask(
    *, draft: FollowUpDraft, text: str, user: AbstractBaseUser | AnonymousUser, enqueue: bool = True
) -> Question:
    """Ask the confirmed standalone question as a follow-up of the draft's question. Asking the same draft twice (a
    double click) gives the question asked the first time."""
    with transaction.atomic():
        # of=self: PostgreSQL refuses FOR UPDATE on the nullable side of the outer join `asked` makes (SQLite has no
        # row locks, so only the production profile showed it).
        locked = (
            FollowUpDraft.objects.select_for_update(of=("self",)).select_related("parent", "asked").get(pk=draft.pk)
        )
        if locked.status == FollowUpDraft.Status.ASKED and locked.asked is not None:
            return locked.asked
        question = question_create(text=text, user=user, parent=locked.parent, enqueue=enqueue)
        FollowUpDraft.objects.filter(pk=locked.pk).update(status=FollowUpDraft.Status.ASKED, asked=question)
    return question


def follow_up_discard(*, draft: FollowUpDraft) -> None:
    FollowUpDraft.objects.filter(pk=draft.pk).exclude(status=FollowUpDraft.Status.ASKED).delete()
