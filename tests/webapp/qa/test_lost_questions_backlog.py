"""A question waiting its turn is never lost, however long the backlog ahead of it: loss is decided by the workers'
heartbeat and by whether a later question was answered past it, not by the time spent waiting (Question.lost)."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone
from pytest_django.fixtures import Settings

from webapp.accounts.roles import RESEARCHER
from webapp.qa.heartbeat import heartbeat_start, worker_heartbeat_beat
from webapp.qa.models import Question, WorkerHeartbeat
from webapp.qa.queue import question_queue_position, questions_unfinished_count
from webapp.qa.selectors import questions_history
from webapp.qa.services import admission
from webapp.qa.tasks import question_retrieve_task

pytestmark = pytest.mark.django_db


def _waiting(user: User, text: str, *, status: Question.Status = Question.Status.QUEUED, minutes: float) -> Question:
    """A question stored `minutes` ago that no worker has taken since: the row as a backlog leaves it."""
    question = admission.question_create(text=text, user=user, enqueue=False)
    then = timezone.now() - timedelta(minutes=minutes)
    Question.objects.filter(pk=question.pk).update(status=status, created_at=then, updated_at=then)
    question.refresh_from_db()
    return question


@pytest.fixture
def worker_alive() -> None:
    worker_heartbeat_beat(name="celery@host", queues=["celery", "embed", "ingest", "llm", "verify"])


@pytest.mark.usefixtures("worker_alive")
def test_a_backlog_that_outlasts_the_lost_window_loses_no_question(
    role_users: dict[str, User], researcher_client: Client, settings: Settings
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MAX_QUEUED_QUESTIONS=4)
    researcher = role_users[RESEARCHER]
    # The one worker is busy (a rebuild, a hundred questions): three asked 45, 40 and 35 minutes ago still wait.
    waiting = [_waiting(researcher, f"Question {n}?", minutes=45 - 5 * n) for n in range(3)]

    assert [question.lost for question in waiting] == [False, False, False]
    assert [question_queue_position(question=question) for question in waiting] == [1, 2, 3]
    assert questions_unfinished_count() == 3
    payload = researcher_client.get(f"/questions/{waiting[0].pk}.json").json()
    assert payload["status"] == "queued"
    assert list(questions_history(visible=Question.objects.all(), user_id=None, status="failed")) == []
    # They still hold their places in the valve: one more fits, then it is full.
    admission.question_create(text="Does zinc shorten colds?", user=researcher)
    with pytest.raises(admission.QueueFullError):
        admission.question_create(text="Does melatonin help jet lag?", user=researcher)
    # When its turn comes, its task answers it (here, retrieval starts) instead of failing it for good.
    question_retrieve_task.apply(args=(waiting[0].pk,))
    waiting[0].refresh_from_db()
    assert waiting[0].status != Question.Status.FAILED


@pytest.mark.usefixtures("worker_alive")
def test_a_question_passed_over_by_a_later_answered_one_is_lost(role_users: dict[str, User]) -> None:
    researcher = role_users[RESEARCHER]
    dropped = _waiting(researcher, "Was my task dropped?", minutes=45)
    later = _waiting(researcher, "Asked after it", minutes=40)
    Question.objects.filter(pk=later.pk).update(status=Question.Status.DONE)

    assert dropped.lost
    assert questions_unfinished_count() == 0


def test_a_question_whose_workers_stopped_beating_is_lost(role_users: dict[str, User]) -> None:
    WorkerHeartbeat.objects.create(
        name="celery@host", queues="llm,verify", beat_at=timezone.now() - timedelta(minutes=40)
    )
    waiting = _waiting(role_users[RESEARCHER], "Is anyone there?", minutes=45)

    assert waiting.lost
    assert questions_unfinished_count() == 0


def test_a_verifying_question_is_lost_when_only_the_verify_workers_are_gone(role_users: dict[str, User]) -> None:
    worker_heartbeat_beat(name="llm@host", queues=["llm"])
    researcher = role_users[RESEARCHER]
    verifying = _waiting(researcher, "Checked?", status=Question.Status.VERIFYING, minutes=45)
    generating = _waiting(researcher, "Written?", status=Question.Status.GENERATING, minutes=45)

    assert verifying.lost
    assert not generating.lost
    assert questions_unfinished_count() == 1


def test_a_worker_beats_at_once_and_then_on_its_own(transactional_db: None) -> None:
    stop = threading.Event()
    thread = heartbeat_start(name="verify@host", queues=["verify"], every=0.05, stop=stop)
    try:
        times = []
        for _ in range(200):
            beat = WorkerHeartbeat.objects.filter(name="verify@host").first()
            if beat is not None and beat.beat_at not in times:
                times.append(beat.beat_at)
            if len(times) >= 2:
                break
            time.sleep(0.02)
    finally:
        stop.set()
        thread.join(timeout=5)

    assert len(times) >= 2, "the heartbeat did not beat again"
    assert WorkerHeartbeat.objects.get().queues == "verify"
