"""Watched answers in the JSON: `watched` and `rechecks` on a question (the page's JSON and the API's), watching
through the API, and `GET /api/v1/notifications` with marking read."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.webapp.factories import RECHECK_CHANGES, notification_stored, recheck_stored
from webapp.qa.models import Question
from webapp.watch.models import Notification, Watch

pytestmark = pytest.mark.django_db


def _api(user: User) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def other_researcher(role_users: dict[str, User]) -> User:
    call_command("user_create", "other-researcher", "--role", "researcher", "--password", "x" * 20, stdout=StringIO())
    return User.objects.get(username="other-researcher")


def test_the_question_json_says_whether_you_watch_it_and_lists_its_rechecks(
    researcher_client: Client, reviewer_client: Client, watched: Question, owner: User, role_users: dict[str, User]
) -> None:
    recheck_stored(question=watched, changes=[], key="job-1")
    recheck_stored(question=watched, key="job-2")

    for payload in (
        researcher_client.get(f"/questions/{watched.pk}.json").json(),
        _api(owner).get(f"/api/v1/questions/{watched.pk}").json(),
    ):
        assert payload["watched"] is True
        assert [recheck["summary"] for recheck in payload["rechecks"]] == [
            "PMID 10000001 retracted; 1 verdict changed; 1 new contradicting abstract.",
            "Nothing changed.",
        ]
        assert payload["rechecks"][0]["changes"] == RECHECK_CHANGES
        assert payload["rechecks"][0]["trigger"] == "sync"
        assert payload["rechecks"][1]["changes"] == []
    assert reviewer_client.get(f"/questions/{watched.pk}.json").json()["watched"] is False
    assert _api(role_users["reviewer"]).get(f"/api/v1/questions/{watched.pk}").json()["watched"] is False


def test_the_owner_watches_and_unwatches_through_the_api(answered: Question, owner: User) -> None:
    api = _api(owner)

    watched = api.post(f"/api/v1/questions/{answered.pk}/watch")
    assert (watched.status_code, watched.json()) == (200, {"question": answered.pk, "watched": True})
    assert api.post(f"/api/v1/questions/{answered.pk}/watch").status_code == 200  # twice is harmless
    assert Watch.objects.filter(user=owner, question=answered).count() == 1

    unwatched = api.delete(f"/api/v1/questions/{answered.pk}/watch")
    assert (unwatched.status_code, unwatched.json()) == (200, {"question": answered.pk, "watched": False})
    assert not Watch.objects.exists()


def test_only_the_owner_may_watch_and_only_an_answered_question(
    answered: Question, role_users: dict[str, User], other_researcher: User
) -> None:
    reviewer = _api(role_users["reviewer"]).post(f"/api/v1/questions/{answered.pk}/watch")
    assert reviewer.status_code == 403, "a reviewer sees the question but may not watch it"
    assert _api(other_researcher).post(f"/api/v1/questions/{answered.pk}/watch").status_code == 404
    assert APIClient().post(f"/api/v1/questions/{answered.pk}/watch").status_code == 401

    Question.objects.filter(pk=answered.pk).update(status=Question.Status.VERIFYING)
    unfinished = _api(role_users["researcher"]).post(f"/api/v1/questions/{answered.pk}/watch")
    assert (unfinished.status_code, unfinished.json()) == (400, {"detail": "Only an answered question can be watched."})
    assert not Watch.objects.exists()


def test_notifications_are_your_own_newest_first_with_an_unread_flag(
    watched: Question, owner: User, other_researcher: User
) -> None:
    older = notification_stored(user=owner, recheck=recheck_stored(question=watched, key="job-1"))
    newer = notification_stored(user=owner, recheck=recheck_stored(question=watched, key="job-2", summary="Later."))
    notification_stored(user=other_researcher, recheck=recheck_stored(question=watched, key="job-3"))
    api = _api(owner)

    listed = api.get("/api/v1/notifications").json()

    assert listed["count"] == 2
    first = listed["results"][0]
    assert first == {
        "id": newer.pk,
        "question": watched.pk,
        "question_text": watched.text,
        "created_at": first["created_at"],
        "unread": True,
        "read_at": None,
        "summary": "Later.",
        "rechecked_at": first["rechecked_at"],
    }
    assert listed["results"][1]["id"] == older.pk

    marked = api.post("/api/v1/notifications/read", {"ids": [older.pk]}, format="json").json()
    assert marked == {"marked": 1, "unread": 1}
    assert [item["id"] for item in api.get("/api/v1/notifications", {"unread": "true"}).json()["results"]] == [newer.pk]
    assert api.post("/api/v1/notifications/read", {}, format="json").json() == {"marked": 1, "unread": 0}
    assert Notification.objects.filter(user=other_researcher, read_at__isnull=True).count() == 1
