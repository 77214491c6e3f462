"""How a question ends other than answered and verified: stopped by its asker, failed, or done without verdicts
because the verifier could not run."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from webapp.qa.models import Question


def question_cancel(*, question_id: int) -> Question:
    """Ask for the question to stop. A running generation stops at its next check (a quarter of a second), a
    question not yet generating is cancelled on the spot; a finished one is left as it is."""
    with transaction.atomic():
        question = Question.objects.select_for_update().get(pk=question_id)
        if question.finished:
            return question
        question.cancel_requested = True
        fields = ["cancel_requested", "updated_at"]
        # Verification takes seconds and the answer is complete by then: it is left to finish.
        if question.status in (Question.Status.QUEUED, Question.Status.RETRIEVING):
            question.status = Question.Status.CANCELLED
            fields.append("status")
        question.save(update_fields=fields)
    return question


def question_mark_cancelled(*, question_id: int) -> None:
    Question.objects.filter(pk=question_id).exclude(status=Question.Status.DONE).update(
        status=Question.Status.CANCELLED
    )


def question_verification_unavailable(*, question_id: int, reason: str) -> None:
    """The verifier could not run: the answer and its citations stand, done, without verdicts, and say why."""
    # The verify stage writes its verdicts and "done" in one transaction, so a failed attempt left none behind.
    Question.objects.filter(pk=question_id).update(
        status=Question.Status.DONE,
        verification_status=Question.Verification.UNAVAILABLE,
        verification_error=reason[:2000],
        updated_at=timezone.now(),
    )


def question_fail(*, question_id: int, reason: str) -> None:
    Question.objects.filter(pk=question_id).update(status=Question.Status.FAILED, error=reason[:2000])


def question_fail_if_lost(question: Question) -> None:
    """Mark a lost question failed for good, saying why, so that a late copy of its task finds it ended; nothing is
    written when it is not lost, or has moved since it was read."""
    if question.lost:
        Question.objects.filter(pk=question.pk, updated_at=question.updated_at).update(
            status=Question.Status.FAILED, error=question.shown_error
        )
