"""Share links: the owner makes a read-only link another signed-in person can open; revoking it makes it 404;
anonymous visitors are sent to sign in."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.webapp.factories import answer_with_references
from webapp.accounts.roles import RESEARCHER, user_assign_role
from webapp.qa.models import Question

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(role_users: dict[str, User]) -> User:
    return role_users[RESEARCHER]


@pytest.fixture
def other_client() -> Client:
    user = User.objects.create_user("other-researcher", password="another-long-password")
    user_assign_role(user=user, role=RESEARCHER)
    client = Client()
    client.force_login(user)
    return client


def _shared(researcher_client: Client, question: Question) -> str:
    response = researcher_client.post(f"/questions/{question.pk}/share")
    assert response.status_code == 302
    assert response["Location"] == f"/questions/{question.pk}/"
    question.refresh_from_db()
    assert question.share_token
    return question.share_token


def test_the_owner_shares_and_the_page_shows_a_copyable_link(researcher_client: Client, owner: User) -> None:
    question = answer_with_references(user=owner)
    token = _shared(researcher_client, question)
    page = researcher_client.get(f"/questions/{question.pk}/").content.decode()
    assert f'value="http://testserver/shared/{token}/" readonly' in page
    assert 'id="share-copy"' in page
    assert f'action="/questions/{question.pk}/unshare"' in page
    assert 'data-read-only="false"' in page
    assert 'id="flag-dialog"' in page, "the owner's own page offers flagging"


def test_sharing_again_keeps_the_link_already_handed_out(researcher_client: Client, owner: User) -> None:
    question = answer_with_references(user=owner)
    assert _shared(researcher_client, question) == _shared(researcher_client, question)


def test_another_researcher_reads_the_shared_answer_read_only(
    researcher_client: Client, other_client: Client, owner: User
) -> None:
    question = answer_with_references(user=owner, status=Question.Status.GENERATING)
    token = _shared(researcher_client, question)
    assert other_client.get(f"/questions/{question.pk}/").status_code == 404, "the id alone still reveals nothing"
    response = other_client.get(f"/shared/{token}/")
    page = response.content.decode()
    assert response.status_code == 200
    assert 'data-read-only="true"' in page
    assert f'data-json-url="/shared/{token}.json"' in page
    assert "cancel-form" not in page, "no Stop button on a shared page"
    assert 'id="flag-dialog"' not in page, "no flagging on a shared page"
    assert "share-url" not in page, "only the owner's own page offers sharing"
    assert f"/shared/{token}/export.md" in page
    payload = other_client.get(f"/shared/{token}.json").json()
    assert payload["id"] == question.pk
    assert payload["sentences"][0]["display_text"] == "Metformin did not cause lactic acidosis."


def test_even_the_owner_gets_no_stop_button_on_the_shared_page(researcher_client: Client, owner: User) -> None:
    question = answer_with_references(user=owner, status=Question.Status.GENERATING)
    token = _shared(researcher_client, question)
    assert "cancel-form" in researcher_client.get(f"/questions/{question.pk}/").content.decode()
    assert "cancel-form" not in researcher_client.get(f"/shared/{token}/").content.decode()


def test_a_revoked_or_unknown_link_is_404(researcher_client: Client, other_client: Client, owner: User) -> None:
    question = answer_with_references(user=owner)
    token = _shared(researcher_client, question)
    assert researcher_client.post(f"/questions/{question.pk}/unshare").status_code == 302
    question.refresh_from_db()
    assert question.share_token is None
    for path in (f"/shared/{token}/", f"/shared/{token}.json", f"/shared/{token}/export.md", "/shared/nope/"):
        assert other_client.get(path).status_code == 404, path
    assert _shared(researcher_client, question) != token, "sharing again makes a new link"


def test_anonymous_visitors_are_sent_to_sign_in(client: Client, researcher_client: Client, owner: User) -> None:
    token = _shared(researcher_client, answer_with_references(user=owner))
    response = client.get(f"/shared/{token}/")
    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next=/shared/{token}/"
    assert client.get(f"/shared/{token}.json").status_code == 401


def test_only_the_owner_may_share_or_revoke(
    researcher_client: Client, other_client: Client, reviewer_client: Client, owner: User
) -> None:
    question = answer_with_references(user=owner)
    token = _shared(researcher_client, question)
    for client in (other_client, reviewer_client):
        assert client.post(f"/questions/{question.pk}/unshare").status_code == 404
        assert client.post(f"/questions/{question.pk}/share").status_code == 404
    question.refresh_from_db()
    assert question.share_token == token
    assert "share-url" not in reviewer_client.get(f"/questions/{question.pk}/").content.decode()


def test_sharing_is_a_post(researcher_client: Client, owner: User) -> None:
    question = answer_with_references(user=owner)
    assert researcher_client.get(f"/questions/{question.pk}/share").status_code == 405
    question.refresh_from_db()
    assert question.share_token is None


def test_the_shared_page_escapes_the_question(researcher_client: Client, other_client: Client, owner: User) -> None:
    question = answer_with_references(user=owner)
    Question.objects.filter(pk=question.pk).update(text="<script>alert('q')</script>")
    token = _shared(researcher_client, question)
    page = other_client.get(f"/shared/{token}/").content.decode()
    assert "<script>alert('q')" not in page
    assert "&lt;script&gt;alert(&#x27;q&#x27;)&lt;/script&gt;" in page
