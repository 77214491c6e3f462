"""How busy the workers are: the questions waiting or running, and where a queued question stands among them."""

from __future__ import annotations

from datetime import timedelta

from django.db.models import Q
from django.utils import timezone

from webapp.qa.models import Question

# Every status a question passes through before it is finished; a question in any of them holds a worker or waits
# for one.
UNFINISHED = (
    Question.Status.QUEUED,
    Question.Status.RETRIEVING,
    Question.Status.GENERATING,
    Question.Status.VERIFYING,
)


def questions_unfinished_count() -> int:
    """Questions queued or running; one COUNT on the (status, created_at) index."""
    return Question.objects.filter(status__in=UNFINISHED).count()


def questions_being_answered(*, active_within: timedelta = timedelta(minutes=20)) -> bool:
    """Whether a question is queued or running and moved within `active_within` (longer than a task may run): one
    left unfinished by a worker that died long ago must not count forever."""
    since = timezone.now() - active_within
    return Question.objects.filter(status__in=UNFINISHED, updated_at__gte=since).exists()


# A question has a place in line until its answer starts being written. After retrieval (about 100 ms) it keeps
# the status "retrieving" while its generation task waits for the LLM worker, and that wait is most of the queueing
# under load: the model writes one answer at a time per worker.
WAITING = (Question.Status.QUEUED, Question.Status.RETRIEVING)


def question_queue_position(*, question: Question) -> int | None:
    """1 when it is next: one plus the unfinished questions asked before this one (running ones included, since they
    hold the workers it waits for). None once its answer is being written, or it has ended.

    Ties on `created_at` are broken by id, so two questions stored in the same microsecond never share a place."""
    if question.status not in WAITING:
        return None
    earlier = Q(created_at__lt=question.created_at) | Q(created_at=question.created_at, pk__lt=question.pk)
    return Question.objects.filter(earlier, status__in=UNFINISHED).count() + 1
