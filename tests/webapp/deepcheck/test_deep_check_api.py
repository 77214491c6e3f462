"""The deep check through the API: start (202), read its progress and tree, stop; the question's access rule."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.webapp.deepcheck.conftest import FakeSearch
from tests.webapp.factories import HOSTILE_CLAIM, answer_with_three_verdicts, deep_check_stored
from webapp.accounts.roles import RESEARCHER, user_assign_role
from webapp.deepcheck.models import DeepCheck
from webapp.deepcheck.tasks import deep_check_run_task
from webapp.qa.models import Question

pytestmark = pytest.mark.django_db


def _api(user: User) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def test_start_poll_and_read_the_tree(answered: Question, owner: User, search: FakeSearch) -> None:
    client = _api(owner)
    url = f"/api/v1/questions/{answered.pk}/deep-check"
    assert client.get(url).status_code == 404  # never deep-checked

    started = client.post(url)
    assert started.status_code == 202
    assert (started.data["status"], started.data["tree"]) == ("queued", None)

    deep_check_run_task.apply(args=(DeepCheck.objects.get().pk,), throw=False)
    done = client.get(url)
    assert done.status_code == 200
    assert done.data["status"] == "done"
    sentence = done.data["tree"]["sentences"][0]
    assert sentence["verdict"] == "SUPPORT_ELSEWHERE"
    assert [claim["verdict"] for claim in sentence["claims"]] == ["SUPPORT", "SUPPORT_ELSEWHERE"]
    assert done.data["models"]["extractor"] == "fake-llm"


def test_stop_and_the_tree_as_stored(role_users: dict[str, User]) -> None:
    question = answer_with_three_verdicts(user=role_users["researcher"])
    deep_check_stored(question=question, status=DeepCheck.Status.QUEUED)
    client = _api(role_users["researcher"])

    stopped = client.post(f"/api/v1/questions/{question.pk}/deep-check/stop")
    assert (stopped.status_code, stopped.data["status"]) == (200, "stopped")

    DeepCheck.objects.update(status=DeepCheck.Status.DONE)
    read = client.get(f"/api/v1/questions/{question.pk}/deep-check").data
    assert read["tree"]["sentences"][1]["claims"][1]["text"] == HOSTILE_CLAIM
    assert read["tree"]["sentences"][1]["claims"][0]["evidence"][1]["cited"] is False


def test_only_the_person_who_asked_or_an_admin_deep_checks_it(answered: Question, role_users: dict[str, User]) -> None:
    other = User.objects.create_user("other-researcher", password="another-long-password")
    user_assign_role(user=other, role=RESEARCHER)
    url = f"/api/v1/questions/{answered.pk}/deep-check"

    assert APIClient().post(url).status_code == 401
    assert _api(other).post(url).status_code == 404
    assert _api(other).post(f"{url}/stop").status_code == 404
    assert _api(role_users["reviewer"]).post(url).status_code == 403  # reviewers read it (and flag its claims)
    assert _api(role_users["admin"]).post(url).status_code == 202


def test_an_unanswered_question_is_refused(answered: Question, owner: User) -> None:
    Question.objects.filter(pk=answered.pk).update(status=Question.Status.QUEUED)

    response = _api(owner).post(f"/api/v1/questions/{answered.pk}/deep-check")

    assert response.status_code == 409
    assert "answered" in response.data["detail"]
