"""Celery tasks for the question pipeline: thin wrappers that own the retry policy and the failed state."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from celery import Task, chain, shared_task
from celery.exceptions import SoftTimeLimitExceeded

from generator.errors import GenerationError
from indexer.errors import IndexerError
from webapp.qa import services

logger = logging.getLogger(__name__)

MAX_RETRIES = 2
RETRY_DELAY_SECONDS = 3


def _run_stage(task: Task, stage: Callable[..., None], question_id: int) -> int:
    """Run one stage; transient failures are retried, anything else marks the question failed with a reason."""
    try:
        stage(question_id=question_id)
    except services.QuestionCancelledError:
        services.question_mark_cancelled(question_id=question_id)
    except (GenerationError, IndexerError) as exc:
        if exc.transient and task.request.retries < MAX_RETRIES:
            raise task.retry(exc=exc, countdown=RETRY_DELAY_SECONDS) from exc
        services.question_fail(question_id=question_id, reason=str(exc))
        raise
    except SoftTimeLimitExceeded:
        services.question_fail(question_id=question_id, reason="The answer took too long and was stopped.")
        raise
    except Exception as exc:
        logger.exception("question %s failed in %s", question_id, stage.__name__)
        services.question_fail(question_id=question_id, reason=f"Internal error in {stage.__name__}: {exc}")
        raise
    return question_id


# acks_late comes from CELERY_TASK_ACKS_LATE: every stage rewrites its own rows, so a redelivery is harmless.
_TASK_OPTIONS: dict[str, Any] = {"bind": True, "max_retries": MAX_RETRIES}


@shared_task(name="qa.question_retrieve", **_TASK_OPTIONS)
def question_retrieve_task(self: Task, question_id: int) -> int:
    return _run_stage(self, services.question_retrieve, question_id)


@shared_task(name="qa.question_generate", **_TASK_OPTIONS)
def question_generate_task(self: Task, question_id: int) -> int:
    return _run_stage(self, services.question_generate, question_id)


@shared_task(name="qa.question_verify", **_TASK_OPTIONS)
def question_verify_task(self: Task, question_id: int) -> int:
    return _run_stage(self, services.question_verify, question_id)


def question_pipeline(question_id: int) -> Any:
    """Retrieve, then generate, then verify; each stage takes the question id the previous one returns."""
    return chain(
        question_retrieve_task.si(question_id),
        question_generate_task.s(),
        question_verify_task.s(),
    )
