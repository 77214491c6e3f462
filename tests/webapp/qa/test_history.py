"""The history page: your own questions newest first, searchable over question and answer, filterable by status,
paginated; reviewers may widen it to everyone's."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from webapp.accounts.roles import RESEARCHER, REVIEWER, user_assign_role
from webapp.qa.models import Question

pytestmark = pytest.mark.django_db


def _asked(user: User | None, text: str, answer: str = "", status: str = Question.Status.DONE) -> Question:
    return Question.objects.create(text=text, answer_text=answer, user=user, status=status)


@pytest.fixture
def other_researcher() -> User:
    user = User.objects.create_user("other-researcher", password="another-long-password")
    user_assign_role(user=user, role=RESEARCHER)
    return user


def test_search_finds_a_question_by_its_answer_text_case_insensitively(
    researcher_client: Client, role_users: dict[str, User]
) -> None:
    mine = _asked(role_users[RESEARCHER], "What does everolimus do?", "Everolimus inhibits mTORC1 (PUBMED:1).")
    _asked(role_users[RESEARCHER], "Is metformin safe?", "No lactic acidosis was seen.")
    page = researcher_client.get("/history/", {"q": "MTORC1"}).content.decode()
    assert f'href="/questions/{mine.pk}/"' in page
    assert "Is metformin safe?" not in page
    assert "1 question matching" in page


def test_history_hides_other_peoples_questions(
    researcher_client: Client, role_users: dict[str, User], other_researcher: User
) -> None:
    _asked(role_users[RESEARCHER], "My own question about statins", "Statins lower LDL.")
    theirs = _asked(other_researcher, "Their question about statins", "Statins lower LDL too.")
    for params in ({}, {"q": "statins"}, {"everyone": "1"}):
        page = researcher_client.get("/history/", params).content.decode()
        assert "My own question about statins" in page
        assert "Their question" not in page
        assert f"/questions/{theirs.pk}/" not in page
        assert 'name="everyone"' not in page, "researchers are not offered everyone's questions"


def test_reviewers_can_switch_to_everyones_questions(
    reviewer_client: Client, role_users: dict[str, User], other_researcher: User
) -> None:
    _asked(role_users[REVIEWER], "A reviewer's own question")
    _asked(other_researcher, "A researcher's question")
    own = reviewer_client.get("/history/").content.decode()
    assert "A reviewer&#x27;s own question" in own
    assert "A researcher&#x27;s question" not in own
    everyone = reviewer_client.get("/history/", {"everyone": "1"}).content.decode()
    assert "A researcher&#x27;s question" in everyone
    assert "other-researcher" in everyone, "everyone's list says who asked"
    assert "<h1>Everyone's questions</h1>" in everyone


def test_the_status_filter_keeps_only_that_status(researcher_client: Client, role_users: dict[str, User]) -> None:
    _asked(role_users[RESEARCHER], "Finished question")
    _asked(role_users[RESEARCHER], "Failed question", status=Question.Status.FAILED)
    page = researcher_client.get("/history/", {"status": "failed"}).content.decode()
    assert "Failed question" in page
    assert "Finished question" not in page
    assert '<option value="failed" selected>' in page
    unknown = researcher_client.get("/history/", {"status": "bogus"}).content.decode()
    assert "Finished question" in unknown, "an unknown status filters nothing"
    assert "Failed question" in unknown


def test_history_is_newest_first_and_paginated_keeping_the_search(
    researcher_client: Client, role_users: dict[str, User]
) -> None:
    now = timezone.now()
    for number in range(25):
        question = _asked(role_users[RESEARCHER], f"Statin question number {number:02d}")
        Question.objects.filter(pk=question.pk).update(created_at=now - timedelta(minutes=number))
    first = researcher_client.get("/history/", {"q": "statin"}).content.decode()
    assert first.index("number 00") < first.index("number 01")
    assert "number 19" in first
    assert "number 20" not in first
    assert "Page 1 of 2" in first
    assert 'href="?q=statin&amp;page=2"' in first
    second = researcher_client.get("/history/", {"q": "statin", "page": "2"}).content.decode()
    assert "number 20" in second
    assert "number 24" in second
    assert "number 19" not in second


def test_history_escapes_question_and_answer_text(researcher_client: Client, role_users: dict[str, User]) -> None:
    _asked(role_users[RESEARCHER], "<script>alert(1)</script>?", "<img src=x onerror=alert(2)>")
    page = researcher_client.get("/history/").content.decode()
    assert "<script>alert(1)" not in page
    assert "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;?" in page


def test_history_needs_sign_in_and_is_linked_from_the_ask_page(client: Client, researcher_client: Client) -> None:
    response = client.get("/history/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=/history/")
    assert 'href="/history/"' in researcher_client.get("/").content.decode()
