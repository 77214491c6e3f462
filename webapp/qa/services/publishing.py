"""Handing a stored question to the workers: its three stages as one Celery chain, published to the broker."""

from __future__ import annotations

from celery import chain, signature
from celery.canvas import Signature

from webapp.qa.services.ending import question_fail
from webapp.task_publishing import task_publish_or_record


def question_pipeline(question_id: int) -> Signature:
    """Retrieve, then generate, then verify; each stage takes the question id the previous one returns.

    The stages are named, not imported: webapp/qa/tasks.py runs them by calling this package, and a name is all
    Celery needs to route and run a task.
    """
    return chain(
        signature("qa.question_retrieve", args=(question_id,), immutable=True),
        signature("qa.question_generate"),
        signature("qa.question_verify"),
    )


def question_enqueue(*, question_id: int) -> bool:
    """Hand the question to the workers. If the broker cannot take it, the question fails with a reason the page
    shows, instead of waiting forever in "queued" (or the request failing with a 500)."""
    return task_publish_or_record(
        question_pipeline(question_id),
        what=f"question {question_id}",
        record_unreachable=lambda: question_fail(
            question_id=question_id,
            reason="The task queue is unreachable, so the question could not be started. Please try again shortly.",
        ),
    )
