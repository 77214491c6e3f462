"""One admission rule for every kind of model work: a question, a follow-up's rewrite, a deep check and a re-check each
count one against the person's `VERIMED_MODEL_ACTIONS_PER_HOUR`, counted from the database (exact across processes),
and each is refused while the queue is full. Here: the questions and the follow-up rewrites (qa's own); the deep
check and the re-check have theirs beside their other tests."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone
from pytest_django.fixtures import Settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.webapp.factories import answer_with_references
from webapp.accounts.roles import RESEARCHER
from webapp.qa import follow_ups
from webapp.qa.models import FollowUpDraft, ModelAction, Question
from webapp.qa.services import admission

pytestmark = pytest.mark.django_db

Capture = Callable[..., Any]
LIMIT_TEXT = "You have started 3 questions, follow-up rewrites, deep checks and re-checks in the last hour"


@pytest.fixture
def three_per_hour(settings: Settings) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MODEL_ACTIONS_PER_HOUR=3, VERIMED_MAX_QUEUED_QUESTIONS=0)


@pytest.fixture
def root(role_users: dict[str, User]) -> Question:
    """The researcher's answered question: this hour's first model action."""
    return answer_with_references(user=role_users[RESEARCHER])


def _start(
    client: Client, question: Question, capture: Capture, text: str = "Is it safe in children?"
) -> tuple[Any, int]:
    """The response to starting a follow-up, and how many rewrites it queued."""
    with capture() as callbacks:
        response = client.post(f"/questions/{question.pk}/follow-up", {"follow_up": text})
    return response, len(callbacks)


@pytest.mark.usefixtures("three_per_hour")
def test_each_follow_up_rewrite_counts_and_past_the_limit_none_is_queued(
    root: Question, researcher_client: Client, django_capture_on_commit_callbacks: Capture
) -> None:
    # A new follow-up replaces the draft not asked yet, but its rewrite is another model call: each one counts.
    for text in ("What about children?", "What about pregnancy?"):
        started, queued = _start(researcher_client, root, django_capture_on_commit_callbacks, text)
        assert (started.status_code, queued) == (302, 1)

    refused, queued = _start(researcher_client, root, django_capture_on_commit_callbacks, "What about the elderly?")

    assert (refused.status_code, queued) == (429, 0)
    page = refused.content.decode()
    assert LIMIT_TEXT in page
    assert FollowUpDraft.objects.get().text == "What about pregnancy?", "the draft not asked yet is kept"
    assert ModelAction.objects.filter(kind=ModelAction.Kind.REWRITE).count() == 2


@pytest.mark.usefixtures("three_per_hour")
def test_questions_and_other_model_work_share_the_limit_on_the_ask_page_and_the_api(
    root: Question, researcher_client: Client, role_users: dict[str, User], django_capture_on_commit_callbacks: Capture
) -> None:
    _start(researcher_client, root, django_capture_on_commit_callbacks)
    assert researcher_client.post("/", {"question": "Does zinc shorten colds?"}).status_code == 302

    page = researcher_client.post("/", {"question": "Does vitamin C shorten colds?"})
    assert page.status_code == 429
    assert LIMIT_TEXT in page.content.decode()

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=role_users[RESEARCHER]).key}")
    api = client.post("/api/v1/questions", {"question": "Does echinacea shorten colds?"}, format="json")
    assert api.status_code == 429
    assert "You can start another at" in api.json()["detail"]
    assert 3500 < int(api["Retry-After"]) <= 3600
    assert Question.objects.filter(user=role_users[RESEARCHER]).count() == 2


@pytest.mark.usefixtures("three_per_hour")
def test_the_wait_is_until_the_oldest_counted_question_or_action_leaves_the_window(
    role_users: dict[str, User],
) -> None:
    user = role_users[RESEARCHER]
    question = admission.question_create(text="Q?", user=user, enqueue=False)
    Question.objects.filter(pk=question.pk).update(created_at=timezone.now() - timedelta(minutes=50))
    for minutes_ago in (40, 20):
        action = ModelAction.objects.create(user=user, kind=ModelAction.Kind.RECHECK)
        ModelAction.objects.filter(pk=action.pk).update(created_at=timezone.now() - timedelta(minutes=minutes_ago))

    with pytest.raises(admission.QuestionRateLimitedError) as refused:
        admission.model_work_admit(user=user, kind=ModelAction.Kind.DEEP_CHECK)

    assert 9 * 60 < refused.value.retry_after_seconds <= 10 * 60  # when the question asked 50 minutes ago leaves
    assert "(in 10 min)" in str(refused.value)
    assert ModelAction.objects.count() == 2, "a refused action is not recorded"


def test_one_persons_model_actions_leave_other_people_free(role_users: dict[str, User], settings: Settings) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MODEL_ACTIONS_PER_HOUR=1)
    admission.model_work_admit(user=role_users[RESEARCHER], kind=ModelAction.Kind.RECHECK)
    with pytest.raises(admission.QuestionRateLimitedError):
        admission.model_work_admit(user=role_users[RESEARCHER], kind=ModelAction.Kind.RECHECK)

    admission.model_work_admit(user=role_users["reviewer"], kind=ModelAction.Kind.RECHECK)


def test_zero_turns_the_limit_on_model_actions_off(role_users: dict[str, User], settings: Settings) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MODEL_ACTIONS_PER_HOUR=0, VERIMED_MAX_QUEUED_QUESTIONS=0)
    for _ in range(5):
        admission.model_work_admit(user=role_users[RESEARCHER], kind=ModelAction.Kind.DEEP_CHECK)
    assert ModelAction.objects.count() == 5


def test_a_full_queue_refuses_a_follow_up_before_its_rewrite_is_queued(
    root: Question, researcher_client: Client, settings: Settings, django_capture_on_commit_callbacks: Capture
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MAX_QUEUED_QUESTIONS=1)
    Question.objects.create(text="Waiting?", status=Question.Status.QUEUED)

    refused, queued = _start(researcher_client, root, django_capture_on_commit_callbacks)

    assert (refused.status_code, queued) == (503, 0)
    assert "The service is busy: 1 question is waiting." in refused.content.decode()
    assert not FollowUpDraft.objects.exists()
    assert not ModelAction.objects.exists()


def test_a_follow_up_not_queued_for_a_rewrite_spends_no_model_action(root: Question, settings: Settings) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MAX_QUEUED_QUESTIONS=1)
    Question.objects.create(text="Waiting?", status=Question.Status.QUEUED)
    assert root.user is not None

    follow_ups.follow_up_draft_create(parent=root, user=root.user, text="And in transplants?", enqueue=False)

    assert not ModelAction.objects.exists()
