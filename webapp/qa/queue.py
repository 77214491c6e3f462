"""How busy the workers are: the questions and other model work waiting or running, and where a queued question (or
other queued work) stands among them.

Other model work that waits for and holds the `llm` workers (the deep check) is registered by the app that owns its
rows, when Django starts (its AppConfig.ready): qa counts it without importing that app, which sits above qa in the
layers contract (pyproject.toml)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Q, QuerySet
from django.utils import timezone

from webapp.qa.models import Question, questions_lost

# Every status a question passes through before it is finished; a question in any of them holds a worker or waits
# for one.
UNFINISHED = (
    Question.Status.QUEUED,
    Question.Status.RETRIEVING,
    Question.Status.GENERATING,
    Question.Status.VERIFYING,
)


@dataclass(frozen=True)
class QueuedWork:
    """A kind of model work besides questions that takes its turn on the `llm` workers."""

    singular: str  # "deep check", in "1 deep check is waiting"
    plural: str
    unfinished: Callable[[], QuerySet[Any]]  # its rows queued or running (those given up as lost left out)
    queued_at: str  # the field that says when a row (last) joined the queue: its place in line
    moved_at: str = "updated_at"  # the field that says when a row last moved (queued, progressed)


_REGISTERED: dict[str, QueuedWork] = {}


def queued_work_register(work: QueuedWork) -> None:
    """Count `work` in the queue valve, the places in line and the embedder's pause rule (once per kind)."""
    _REGISTERED[work.plural] = work


def queued_work_kinds() -> tuple[QueuedWork, ...]:
    return tuple(_REGISTERED.values())


def questions_unfinished() -> QuerySet[Question]:
    """Questions queued or running, those lost left out (`Question.lost`): a question whose worker died (or whose
    task a broker restart dropped) must not hold a place in line, or fill the queue valve, for good; one waiting its
    turn behind a backlog keeps both, however long it waits."""
    return Question.objects.filter(status__in=UNFINISHED).exclude(questions_lost())


def questions_unfinished_count() -> int:
    """Questions queued or running (lost ones left out); one COUNT on the (status, created_at) index."""
    return questions_unfinished().count()


def work_unfinished_counts() -> list[tuple[int, str, str]]:
    """(how many, singular, plural) queued or running, questions first: one COUNT per kind of work."""
    return [(questions_unfinished_count(), "question", "questions")] + [
        (work.unfinished().count(), work.singular, work.plural) for work in queued_work_kinds()
    ]


def questions_being_answered(*, active_within: timedelta = timedelta(minutes=20)) -> bool:
    """Whether a question is queued or running and moved within `active_within` (longer than a task may run): one
    left unfinished by a worker that died long ago must not count forever."""
    since = timezone.now() - active_within
    return Question.objects.filter(status__in=UNFINISHED, updated_at__gte=since).exists()


def model_work_being_done(*, active_within: timedelta = timedelta(minutes=20)) -> bool:
    """`questions_being_answered`, or other registered work queued or running that moved within `active_within`:
    what the background embedder gives way to (a deep check reads the same LLM server a question does)."""
    if questions_being_answered(active_within=active_within):
        return True
    since = timezone.now() - active_within
    return any(work.unfinished().filter(**{f"{work.moved_at}__gte": since}).exists() for work in queued_work_kinds())


# A question has a place in line until its answer starts being written. After retrieval (about 100 ms) it keeps
# the status "retrieving" while its generation task waits for the LLM worker, and that wait is most of the queueing
# under load: the model writes one answer at a time per worker.
WAITING = (Question.Status.QUEUED, Question.Status.RETRIEVING)


def _others_ahead(moment: datetime, *, own: QueuedWork | None = None, own_pk: int | None = None) -> int:
    """Registered work queued before `moment`; of `own` kind, also what was queued in the same instant with a lower
    id, so two rows queued together never share a place."""
    ahead = 0
    for work in queued_work_kinds():
        earlier = Q(**{f"{work.queued_at}__lt": moment})
        if work is own:
            earlier |= Q(**{work.queued_at: moment, "pk__lt": own_pk})
        ahead += work.unfinished().filter(earlier).count()
    return ahead


def question_queue_position(*, question: Question) -> int | None:
    """1 when it is next: one plus the unfinished questions asked before this one (running ones included, since they
    hold the workers it waits for) and the registered work (deep checks) queued before it. None once its answer is
    being written, or it has ended. One COUNT per kind of work.

    Ties on `created_at` are broken by id, so two questions stored in the same microsecond never share a place."""
    if question.status not in WAITING or question.lost:
        return None
    earlier = Q(created_at__lt=question.created_at) | Q(created_at=question.created_at, pk__lt=question.pk)
    return questions_unfinished().filter(earlier).count() + _others_ahead(question.created_at) + 1


def queued_work_position(*, work: QueuedWork, pk: int, queued_at: datetime) -> int:
    """The place in line of a registered kind of work's row still waiting: 1 when it is next, as for a question,
    counting the questions and other work queued before it."""
    questions = questions_unfinished().filter(created_at__lt=queued_at).count()
    return questions + _others_ahead(queued_at, own=work, own_pk=pk) + 1
