"""The per-person hourly limit on asking: enforced where questions are created, so the page and the API agree."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone
from pytest_django.fixtures import Settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from webapp.accounts.roles import RESEARCHER, REVIEWER
from webapp.qa.models import Question
from webapp.qa.services import admission


@pytest.fixture
def two_per_hour(settings: Settings) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_QUESTIONS_PER_HOUR=2)
    settings.VERIMED = settings.VERIMED.replace(
        VERIMED_MAX_QUEUED_QUESTIONS=0
    )  # the queue valve is another test's subject


def _api(user: User) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def _ask_page(client: Client, text: str = "Does metformin cause lactic acidosis?") -> int:
    return client.post("/", {"question": text}).status_code


@pytest.mark.usefixtures("two_per_hour")
def test_the_page_refuses_the_question_past_the_limit_with_429_and_says_when(
    researcher_client: Client, role_users: dict[str, User]
) -> None:
    assert [_ask_page(researcher_client), _ask_page(researcher_client)] == [302, 302]
    response = researcher_client.post("/", {"question": "A third question?"})
    assert response.status_code == 429
    page = response.content.decode()
    assert "2 questions in the last hour" in page
    assert "You can ask again at" in page
    assert Question.objects.filter(user=role_users[RESEARCHER]).count() == 2


@pytest.mark.usefixtures("two_per_hour")
def test_the_api_refuses_past_the_limit_with_429_json_and_retry_after(role_users: dict[str, User]) -> None:
    client = _api(role_users[RESEARCHER])
    codes = [client.post("/api/v1/questions", {"question": "Q?"}, format="json").status_code for _ in range(2)]
    assert codes == [201, 201]
    response = client.post("/api/v1/questions", {"question": "Q?"}, format="json")
    assert response.status_code == 429
    assert response["Content-Type"] == "application/json"
    assert "You can ask again at" in response.json()["detail"]
    assert 3500 < int(response["Retry-After"]) <= 3600


@pytest.mark.usefixtures("two_per_hour")
def test_one_persons_limit_leaves_other_people_free_to_ask(
    researcher_client: Client, reviewer_client: Client, role_users: dict[str, User]
) -> None:
    for _ in range(2):
        _ask_page(researcher_client)
    assert _ask_page(researcher_client) == 429
    assert _ask_page(reviewer_client) == 302
    assert _api(role_users[REVIEWER]).post("/api/v1/questions", {"question": "Q?"}, format="json").status_code == 201


@pytest.mark.usefixtures("two_per_hour")
def test_a_question_stops_counting_an_hour_after_it_was_asked(
    researcher_client: Client, role_users: dict[str, User]
) -> None:
    for _ in range(2):
        _ask_page(researcher_client)
    oldest = Question.objects.filter(user=role_users[RESEARCHER]).order_by("created_at").first()
    assert oldest is not None
    Question.objects.filter(pk=oldest.pk).update(created_at=timezone.now() - timedelta(minutes=61))
    assert _ask_page(researcher_client) == 302
    assert _ask_page(researcher_client) == 429


@pytest.mark.usefixtures("two_per_hour")
def test_the_wait_is_until_the_oldest_counted_question_leaves_the_window(role_users: dict[str, User]) -> None:
    user = role_users[RESEARCHER]
    for minutes_ago in (50, 20):
        question = admission.question_create(text="Q?", user=user, enqueue=False)
        Question.objects.filter(pk=question.pk).update(created_at=timezone.now() - timedelta(minutes=minutes_ago))
    with pytest.raises(admission.QuestionRateLimitedError) as refused:
        admission.question_create(text="Q?", user=user, enqueue=False)
    assert 9 * 60 < refused.value.retry_after_seconds <= 10 * 60
    assert "(in 10 min)" in str(refused.value)


def test_zero_turns_the_limit_off(settings: Settings, researcher_client: Client) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_QUESTIONS_PER_HOUR=0)
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MAX_QUEUED_QUESTIONS=0)
    assert [_ask_page(researcher_client) for _ in range(5)] == [302] * 5
