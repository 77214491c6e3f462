"""What the pipeline's three stages share: entering a stage (a cancelled question's stages do nothing), the settings
the question is answered with, and the timings recorded on it."""

from __future__ import annotations

import time
from typing import Any

from webapp.qa.models import Question
from webapp.qa.pipeline import PipelineSettings
from webapp.qa.services.ending import question_fail_if_lost


class QuestionCancelledError(Exception):
    """The question was cancelled: the remaining stages do nothing."""


class QuestionEndedError(Exception):
    """The question has ended (answered, failed, or lost and so failed): a late or repeated copy of a stage's task,
    such as a broker's redelivery after a restart, does nothing rather than answer it a second time."""


def stage_enter(question_id: int, status: Question.Status) -> Question:
    question = Question.objects.get(pk=question_id)
    if question.cancel_requested or question.status == Question.Status.CANCELLED:
        raise QuestionCancelledError(f"question {question_id} was cancelled")
    if question.lost:
        # Its page already shows it failed, with Ask again: answering it now would answer it twice.
        question_fail_if_lost(question)
        raise QuestionEndedError(f"question {question_id} was lost before this stage began")
    if question.finished:
        raise QuestionEndedError(f"question {question_id} has already ended ({question.status})")
    question.status = status
    question.save(update_fields=["status", "updated_at"])
    return question


def stage_pipeline(question: Question) -> PipelineSettings:
    return PipelineSettings.model_validate(question.settings)


def stage_record_timing(question: Question, stage: str, started: float, **extra: Any) -> None:
    question.timings_ms = {**question.timings_ms, stage: round((time.perf_counter() - started) * 1000, 1), **extra}
