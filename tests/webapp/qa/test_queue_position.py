"""Under load: a queued question knows its place in the queue, and a full queue refuses new questions cleanly
(503 with a message on the page and in the API) instead of letting every asker wait longer and longer."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.utils import timezone
from pytest_django.fixtures import DjangoAssertNumQueries, Settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from webapp.accounts.roles import RESEARCHER
from webapp.qa.models import Question
from webapp.qa.queue import (
    question_queue_position,
    questions_being_answered,
    questions_unfinished_count,
    queued_work_kinds,
)
from webapp.qa.services import admission

pytestmark = pytest.mark.django_db

BUSY = "The service is busy: 2 questions are waiting. Please try again in a few minutes."


def _asked(status: Question.Status, *, minutes_ago: float, user: User | None = None) -> Question:
    question = Question.objects.create(text=f"{status} question?", status=status, user=user)
    # created_at is auto_now_add: set the age the queue orders by afterwards.
    Question.objects.filter(pk=question.pk).update(created_at=timezone.now() - timedelta(minutes=minutes_ago))
    question.refresh_from_db()
    return question


def test_queued_questions_are_numbered_by_age_counting_the_running_ones_ahead() -> None:
    _asked(Question.Status.DONE, minutes_ago=10)
    _asked(Question.Status.FAILED, minutes_ago=9)
    _asked(Question.Status.CANCELLED, minutes_ago=8)
    _asked(Question.Status.GENERATING, minutes_ago=7)
    _asked(Question.Status.VERIFYING, minutes_ago=6)
    first = _asked(Question.Status.QUEUED, minutes_ago=5)
    second = _asked(Question.Status.QUEUED, minutes_ago=4)
    _asked(Question.Status.DONE, minutes_ago=3)  # finished after the others were asked: holds no worker
    _asked(Question.Status.QUEUED, minutes_ago=1)  # asked later: behind, not ahead
    assert question_queue_position(question=first) == 3
    assert question_queue_position(question=second) == 4


def test_the_next_question_is_number_one_and_one_being_answered_has_no_place() -> None:
    alone = _asked(Question.Status.QUEUED, minutes_ago=1)
    assert question_queue_position(question=alone) == 1
    for status in (Question.Status.GENERATING, Question.Status.VERIFYING, Question.Status.DONE):
        Question.objects.filter(pk=alone.pk).update(status=status)
        alone.refresh_from_db()
        assert question_queue_position(question=alone) is None


def test_a_retrieved_question_keeps_its_place_while_it_waits_for_the_model() -> None:
    _asked(Question.Status.GENERATING, minutes_ago=3)
    _asked(Question.Status.RETRIEVING, minutes_ago=2)  # retrieved, waiting for the model too
    waiting = _asked(Question.Status.RETRIEVING, minutes_ago=1)
    assert question_queue_position(question=waiting) == 3


def test_questions_asked_in_the_same_instant_get_distinct_places() -> None:
    first = _asked(Question.Status.QUEUED, minutes_ago=2)
    second = _asked(Question.Status.QUEUED, minutes_ago=1)
    Question.objects.filter(pk=second.pk).update(created_at=first.created_at)
    second.refresh_from_db()
    assert {question_queue_position(question=first), question_queue_position(question=second)} == {1, 2}


def test_the_place_costs_one_count_query_per_kind_of_work_on_the_status_index(
    django_assert_num_queries: DjangoAssertNumQueries,
) -> None:
    queued = _asked(Question.Status.QUEUED, minutes_ago=1)
    kinds = 1 + len(queued_work_kinds())  # questions, and the work that waits for the same workers (deep checks)
    # And one read of the workers' heartbeats, which tells a lost question from one waiting behind a backlog.
    with django_assert_num_queries(kinds + 1) as captured:
        question_queue_position(question=queued)
    counts = [query["sql"] for query in captured.captured_queries if query["sql"].upper().startswith("SELECT COUNT(")]
    assert len(counts) == kinds
    sql = counts[0]
    if connection.vendor == "sqlite":  # the test database here; PostgreSQL plans tiny tables as sequential scans
        with connection.cursor() as cursor:
            cursor.execute(f"EXPLAIN QUERY PLAN {sql}")
            plan = " ".join(str(row) for row in cursor.fetchall())
        assert "question_status_created" in plan


def test_the_question_json_carries_the_queue_position(researcher_client: Client, role_users: dict[str, User]) -> None:
    _asked(Question.Status.GENERATING, minutes_ago=3, user=role_users["admin"])
    mine = _asked(Question.Status.QUEUED, minutes_ago=1, user=role_users[RESEARCHER])
    payload = researcher_client.get(f"/questions/{mine.pk}.json").json()
    assert payload["status"] == "queued"
    assert payload["queue_position"] == 2


def test_a_full_queue_refuses_a_question_on_the_page_with_503_and_the_message(
    researcher_client: Client, settings: Settings
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MAX_QUEUED_QUESTIONS=2)
    _asked(Question.Status.QUEUED, minutes_ago=2)
    _asked(Question.Status.GENERATING, minutes_ago=1)
    response = researcher_client.post("/", {"question": "Is metformin safe in pregnancy?"})
    assert response.status_code == 503
    assert BUSY in response.content.decode()
    assert response.context["text"] == "Is metformin safe in pregnancy?", "the typed question is kept for a retry"
    assert Question.objects.count() == 2


def test_a_full_queue_refuses_a_question_in_the_api_with_503_json(
    role_users: dict[str, User], settings: Settings
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MAX_QUEUED_QUESTIONS=2)
    _asked(Question.Status.QUEUED, minutes_ago=2)
    _asked(Question.Status.VERIFYING, minutes_ago=1)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=role_users[RESEARCHER]).key}")
    response = client.post("/api/v1/questions", {"question": "Is aspirin cardioprotective?"}, format="json")
    assert response.status_code == 503
    assert response.json() == {"detail": BUSY}
    assert response["Retry-After"] == "60"
    assert Question.objects.count() == 2


def test_finished_questions_do_not_fill_the_queue(
    researcher_client: Client, settings: Settings, django_capture_on_commit_callbacks: object
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MAX_QUEUED_QUESTIONS=2)
    for status in (Question.Status.DONE, Question.Status.FAILED, Question.Status.CANCELLED):
        _asked(status, minutes_ago=5)
    _asked(Question.Status.QUEUED, minutes_ago=1)
    with django_capture_on_commit_callbacks():  # type: ignore[operator]
        response = researcher_client.post("/", {"question": "Is metformin safe in pregnancy?"})
    assert response.status_code == 302
    assert questions_unfinished_count() == 2


def test_zero_means_no_limit(settings: Settings) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MAX_QUEUED_QUESTIONS=0)
    for minutes in range(3):
        _asked(Question.Status.QUEUED, minutes_ago=minutes + 1)
    # The check runs only for questions headed for the workers (enqueue); the publish itself waits for a commit.
    question = admission.question_create(text="Still accepted?")
    assert question.status == Question.Status.QUEUED
    assert questions_unfinished_count() == 4


def test_the_refusal_is_a_question_rejection_so_every_caller_already_handles_it(settings: Settings) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MAX_QUEUED_QUESTIONS=1)
    _asked(Question.Status.QUEUED, minutes_ago=1)
    with pytest.raises(admission.QuestionRejectedError, match="The service is busy: 1 question is waiting"):
        admission.question_create(text="One more?")


def test_the_background_embedder_gives_way_while_a_question_is_answered_but_not_to_a_stale_one() -> None:
    assert not questions_being_answered()
    question = admission.question_create(text="Does zinc shorten colds?", enqueue=False)
    assert questions_being_answered()  # queued, just now

    Question.objects.filter(pk=question.pk).update(updated_at=timezone.now() - timedelta(hours=2))
    assert not questions_being_answered()  # left unfinished by a worker that died long ago

    Question.objects.filter(pk=question.pk).update(status=Question.Status.DONE, updated_at=timezone.now())
    assert not questions_being_answered()
