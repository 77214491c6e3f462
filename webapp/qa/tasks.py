"""Celery tasks for the question pipeline: thin wrappers that own the retry policy and the failed state."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from celery import Task, shared_task

from generator.errors import GenerationError
from indexer.errors import IndexerError
from webapp.qa import follow_ups
from webapp.qa.services import ending, generate, retrieve, stages, verify
from webapp.task_retries import (
    DatabaseUnavailableError,
    RetryPolicy,
    WorkFailure,
    database_errors_as_transient,
    run_retrying,
)

logger = logging.getLogger(__name__)

# Waits of 3, 6 and 12 s: 21 s in all ride out a restart of the LLM server (a supervisor's, or `stack start --only
# llm`: the 1.5B model loads in seconds), of a search engine or of the database, where two retries 3 s apart failed
# the question.
MAX_RETRIES = 3
RETRY_DELAY_SECONDS = 3
RETRY_POLICY = RetryPolicy(
    max_retries=MAX_RETRIES,
    delay_seconds=RETRY_DELAY_SECONDS,
    retry_on=(GenerationError, IndexerError, DatabaseUnavailableError),
    backoff=2.0,
)


def _attempt(task: Task, stage: Callable[..., None], question_id: int) -> WorkFailure | None:
    """Run one stage (a cancelled question's stages do nothing); transient failures are retried."""

    def work() -> None:
        try:
            with database_errors_as_transient():
                stage(question_id=question_id)
        except stages.QuestionCancelledError:
            ending.question_mark_cancelled(question_id=question_id)
        except stages.QuestionEndedError as ended:
            logger.info("%s: nothing to do", ended)

    return run_retrying(task, work, RETRY_POLICY, describe=f"question {question_id} in {stage.__name__}")


def _run_stage(task: Task, stage: Callable[..., None], question_id: int) -> int:
    """Run one stage; anything that is not retried marks the question failed with a reason, and fails the task."""
    failure = _attempt(task, stage, question_id)
    if failure is not None:
        reason = failure.reason(
            timed_out="The answer took too long and was stopped.", internal=f"Internal error in {stage.__name__}"
        )
        ending.question_fail(question_id=question_id, reason=reason)
        raise failure.error
    return question_id


# acks_late comes from CELERY_TASK_ACKS_LATE: every stage rewrites its own rows, so a redelivery is harmless.
_TASK_OPTIONS: dict[str, Any] = {"bind": True, "max_retries": MAX_RETRIES}


@shared_task(name="qa.question_retrieve", **_TASK_OPTIONS)
def question_retrieve_task(self: Task, question_id: int) -> int:
    return _run_stage(self, retrieve.question_retrieve, question_id)


@shared_task(name="qa.question_generate", **_TASK_OPTIONS)
def question_generate_task(self: Task, question_id: int) -> int:
    return _run_stage(self, generate.question_generate, question_id)


@shared_task(name="qa.question_verify", **_TASK_OPTIONS)
def question_verify_task(self: Task, question_id: int) -> int:
    # The answer and its citations are stored by now: a verifier that cannot run (retries spent, a missing or
    # corrupt checkpoint) leaves the question done with its verification marked unavailable, not failed.
    failure = _attempt(self, verify.question_verify, question_id)
    if failure is not None:
        ending.question_verification_unavailable(
            question_id=question_id,
            reason=failure.reason(
                timed_out="the verifier took too long and was stopped.",
                internal=f"the verifier could not run ({type(failure.error).__name__})",
            ),
        )
    return question_id


# The person waits at the page with an editable proposal, so the rewrite is never retried: a failure of any kind
# leaves the fallback there at once, with its reason. The time limits leave the model client's own 60 s timeout
# (follow_ups.REWRITE_TIMEOUT_SECONDS) room to end it first.
_NO_RETRY = RetryPolicy(max_retries=0, delay_seconds=0, retry_on=(GenerationError,))


@shared_task(name="qa.follow_up_rewrite", bind=True, soft_time_limit=90, time_limit=120)
def follow_up_rewrite_task(self: Task, draft_id: int) -> None:
    failure = run_retrying(
        self, lambda: follow_ups.follow_up_rewrite(draft_id=draft_id), _NO_RETRY, describe=f"follow-up {draft_id}"
    )
    if failure is not None:
        follow_ups.follow_up_rewrite_failed(
            draft_id=draft_id,
            reason=failure.reason(timed_out="it took too long", internal="an internal error"),
        )
