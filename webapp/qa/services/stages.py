"""What the pipeline's three stages share: entering a stage (a cancelled question's stages do nothing), the settings
the question is answered with, and the timings recorded on it."""

from __future__ import annotations

import time
from typing import Any

from webapp.qa.models import Question
from webapp.qa.pipeline import PipelineSettings


class QuestionCancelledError(Exception):
    """The question was cancelled: the remaining stages do nothing."""


def stage_enter(question_id: int, status: Question.Status) -> Question:
    question = Question.objects.get(pk=question_id)
    if question.cancel_requested or question.status == Question.Status.CANCELLED:
        raise QuestionCancelledError(f"question {question_id} was cancelled")
    question.status = status
    question.save(update_fields=["status", "updated_at"])
    return question


def stage_pipeline(question: Question) -> PipelineSettings:
    return PipelineSettings.model_validate(question.settings)


def stage_record_timing(question: Question, stage: str, started: float, **extra: Any) -> None:
    question.timings_ms = {**question.timings_ms, stage: round((time.perf_counter() - started) * 1000, 1), **extra}
