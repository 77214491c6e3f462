"""A question whose worker died, or whose task a broker restart dropped, must not hang "generating" for good: once it
has not moved for `VERIMED_QUESTION_LOST_MINUTES` it reads as failed with a reason and an Ask again button, leaves the
queue, and a late copy of its task (a redelivery) does nothing. A stage's task for a question that has already ended
never answers it a second time."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from django.test import Client
from django.utils import timezone
from pytest_django.fixtures import Settings

from tests.webapp.factories import answer_with_three_verdicts
from webapp.accounts.roles import RESEARCHER
from webapp.qa.models import Question
from webapp.qa.queue import question_queue_position, questions_unfinished_count
from webapp.qa.services import admission
from webapp.qa.tasks import question_generate_task, question_retrieve_task

pytestmark = pytest.mark.django_db


def _stalled(question: Question, *, status: Question.Status, minutes: float) -> Question:
    """The row as a dead worker leaves it: in a stage, last moved `minutes` ago."""
    Question.objects.filter(pk=question.pk).update(
        status=status, updated_at=timezone.now() - timedelta(minutes=minutes)
    )
    question.refresh_from_db()
    return question


def _asked(user: User, text: str = "Does everolimus inhibit mTORC1?") -> Question:
    return admission.question_create(text=text, user=user, enqueue=False)


def test_a_question_unmoved_past_the_window_reads_as_failed_and_leaves_the_queue(
    role_users: dict[str, User], researcher_client: Client
) -> None:
    researcher = role_users[RESEARCHER]
    lost = _stalled(_asked(researcher), status=Question.Status.GENERATING, minutes=31)
    waiting = _stalled(_asked(researcher, "Is metformin safe?"), status=Question.Status.QUEUED, minutes=29)

    assert lost.lost
    assert not waiting.lost
    payload = researcher_client.get(f"/questions/{lost.pk}.json").json()
    assert payload["status"] == "failed"
    assert "30 minutes" in payload["error"]
    assert "Ask it again" in payload["error"]
    # The one still in its window is next in line: the lost one holds no place ahead of it.
    assert questions_unfinished_count() == 1
    assert question_queue_position(question=waiting) == 1
    page = researcher_client.get(f"/questions/{lost.pk}/").content.decode()
    assert 'id="ask-again-form"' in page
    assert 'class="ask-again-form" hidden' not in page
    history = researcher_client.get("/history/").content.decode()
    assert "Failed (lost)" in history


def test_lost_questions_do_not_fill_the_queue_valve(settings: Settings, role_users: dict[str, User]) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MAX_QUEUED_QUESTIONS=2)
    researcher = role_users[RESEARCHER]
    for text in ("Is metformin safe?", "Does aspirin prevent stroke?"):
        _stalled(_asked(researcher, text), status=Question.Status.RETRIEVING, minutes=45)
    # Both places are free again: the lost two hold none.
    admission.question_create(text="Does zinc shorten colds?", user=researcher)
    admission.question_create(text="Does melatonin help jet lag?", user=researcher)
    with pytest.raises(admission.QueueFullError):
        admission.question_create(text="Does vitamin D prevent falls?", user=researcher)


def test_a_late_task_for_a_lost_question_does_nothing_and_fails_it_for_good(role_users: dict[str, User]) -> None:
    lost = _stalled(_asked(role_users[RESEARCHER]), status=Question.Status.QUEUED, minutes=31)

    assert question_retrieve_task.apply(args=(lost.pk,), throw=True).successful()

    lost.refresh_from_db()
    assert lost.status == Question.Status.FAILED
    assert "was lost" in lost.error
    assert not lost.retrieved.exists()


def test_a_redelivered_stage_never_answers_an_ended_question_again(role_users: dict[str, User]) -> None:
    answered = answer_with_three_verdicts(user=role_users[RESEARCHER])
    before = (answered.answer_text, list(answered.sentences.values_list("pk", flat=True)))

    assert question_generate_task.apply(args=(answered.pk,), throw=True).successful()

    answered.refresh_from_db()
    assert answered.status == Question.Status.DONE
    assert (answered.answer_text, list(answered.sentences.values_list("pk", flat=True))) == before


def test_ask_again_starts_the_same_question_anew_through_the_same_limits(
    settings: Settings, role_users: dict[str, User], researcher_client: Client
) -> None:
    researcher = role_users[RESEARCHER]
    original = _asked(researcher)
    original.settings = {**original.settings, "filters": {**original.settings["filters"], "year_from": 2015}}
    original.save(update_fields=["settings"])
    lost = _stalled(original, status=Question.Status.GENERATING, minutes=40)

    response = researcher_client.post(f"/questions/{lost.pk}/again")

    again = Question.objects.exclude(pk=lost.pk).get()
    assert response.status_code == 302
    assert response["Location"] == f"/questions/{again.pk}/"
    assert again.text == lost.text
    assert again.user == researcher
    assert again.settings["filters"]["year_from"] == 2015
    lost.refresh_from_db()
    assert lost.status == Question.Status.FAILED  # for good: a late copy of its task finds it ended

    # The same hourly limit as asking: two questions this hour, and one is the most allowed.
    settings.VERIMED = settings.VERIMED.replace(VERIMED_QUESTIONS_PER_HOUR=1)
    refused = researcher_client.post(f"/questions/{lost.pk}/again")
    assert refused.status_code == 429
    assert "You have asked 1 questions in the last hour" in refused.content.decode()
    assert Question.objects.count() == 2


def test_only_a_failed_stopped_or_lost_question_is_asked_again(role_users: dict[str, User]) -> None:
    researcher = role_users[RESEARCHER]
    running = _stalled(_asked(researcher), status=Question.Status.GENERATING, minutes=5)
    with pytest.raises(admission.QuestionRejectedError, match="failed or was stopped"):
        admission.question_ask_again(question=running, user=researcher)
    Question.objects.filter(pk=running.pk).update(status=Question.Status.CANCELLED)
    running.refresh_from_db()
    assert admission.question_ask_again(question=running, user=researcher).text == running.text


def test_the_lost_window_must_outlast_a_task(settings: Settings) -> None:
    with pytest.raises(ImproperlyConfigured, match=r"VERIMED_QUESTION_LOST_MINUTES=15: .*longer than"):
        settings.VERIMED.replace(VERIMED_QUESTION_LOST_MINUTES=15)  # the task may run 16 minutes


def test_the_api_asks_a_lost_question_again(role_users: dict[str, User]) -> None:
    from rest_framework.test import APIClient

    researcher = role_users[RESEARCHER]
    lost = _stalled(_asked(researcher), status=Question.Status.RETRIEVING, minutes=31)
    client = APIClient()
    client.force_authenticate(researcher)

    created = client.post(f"/api/v1/questions/{lost.pk}/again")

    assert created.status_code == 201
    again = Question.objects.get(pk=created.json()["id"])
    assert again.text == lost.text
    assert client.get(f"/api/v1/questions/{lost.pk}").json()["status"] == "failed"
    refused = client.post(f"/api/v1/questions/{again.pk}/again")  # queued, in its window: nothing to ask again
    assert refused.status_code == 400
    assert "failed or was stopped" in refused.json()["detail"]


def test_the_history_filter_goes_by_the_status_shown(role_users: dict[str, User]) -> None:
    from rest_framework.test import APIClient

    researcher = role_users[RESEARCHER]
    lost = _stalled(_asked(researcher), status=Question.Status.GENERATING, minutes=31)
    running = _stalled(_asked(researcher, "Is metformin safe?"), status=Question.Status.GENERATING, minutes=1)
    client = APIClient()
    client.force_authenticate(researcher)

    def listed(status: str) -> list[int]:
        return [row["id"] for row in client.get("/api/v1/questions", {"status": status}).json()["results"]]

    assert listed("failed") == [lost.pk]
    assert listed("generating") == [running.pk]
