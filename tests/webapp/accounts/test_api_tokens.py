"""API tokens rotate on request, and stop working when revoked, on the site or through the API, or when the
password changes (webapp.accounts.api_tokens)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from webapp.accounts.api_tokens import api_token_rotate
from webapp.accounts.roles import RESEARCHER

PASSWORD = "a-long-test-password"  # role_users' password
pytestmark = pytest.mark.django_db


def _exchange(username: str, password: str = PASSWORD) -> str:
    response = APIClient().post("/api/v1/auth/token", {"username": username, "password": password}, format="json")
    assert response.status_code == 200, response.content
    key: str = response.json()["token"]
    return key


def _works(key: str) -> bool:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    status: int = client.get("/api/v1/questions").status_code
    assert status in (200, 401)
    return status == 200


@pytest.fixture
def researcher(role_users: dict[str, User]) -> User:
    return role_users[RESEARCHER]


def test_rotating_through_the_api_gives_a_new_token_and_ends_the_old_one(researcher: User) -> None:
    old = _exchange(researcher.username)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {old}")

    response = client.post("/api/v1/auth/token/rotate")

    assert response.status_code == 200
    new = response.json()["token"]
    assert new != old
    assert _works(new)
    assert not _works(old)
    assert _exchange(researcher.username) == new  # the exchange hands out the current token


def test_revoking_through_the_api_ends_the_token(researcher: User) -> None:
    key = _exchange(researcher.username)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")

    assert client.post("/api/v1/auth/token/revoke").status_code == 204
    assert not _works(key)
    assert not Token.objects.filter(user=researcher).exists()


def test_changing_the_password_on_the_site_revokes_the_token(researcher: User) -> None:
    key = _exchange(researcher.username)
    client = Client()
    client.force_login(researcher)

    response = client.post(
        "/accounts/password_change/",
        {
            "old_password": PASSWORD,
            "new_password1": "another-long-password-9",
            "new_password2": "another-long-password-9",
        },
    )

    assert response.status_code == 302, response.content
    assert not _works(key)
    assert _exchange(researcher.username, "another-long-password-9") != key


def test_any_new_password_revokes_the_token_but_other_saves_keep_it(researcher: User) -> None:
    key = _exchange(researcher.username)
    researcher.first_name = "Ada"
    researcher.save()
    researcher.save(update_fields=["last_login"])
    assert _works(key)

    researcher.set_password("another-long-password-9")  # as the admin and `changepassword` do
    researcher.save()

    assert not _works(key)


def test_the_site_page_makes_shows_once_and_revokes_a_token(researcher: User) -> None:
    old = api_token_rotate(user=researcher).key
    client = Client()
    client.force_login(researcher)

    assert "You have a token" in client.get("/accounts/api-token/").content.decode()
    made = client.post("/accounts/api-token/new")
    new = Token.objects.get(user=researcher).key
    assert new != old
    assert new in made.content.decode()
    assert new not in client.get("/accounts/api-token/").content.decode()  # shown once only
    assert not _works(old)

    revoked = client.post("/accounts/api-token/revoke", follow=True)

    assert "Your API token is revoked" in revoked.content.decode()
    assert "You have no token" in revoked.content.decode()
    assert not _works(new)


def test_the_command_rotates_and_revokes(researcher: User) -> None:
    old = _exchange(researcher.username)
    out = StringIO()

    call_command("api_token", researcher.username, "--rotate", stdout=out)

    new = out.getvalue().strip()
    assert new != old
    assert _works(new)
    assert not _works(old)
    call_command("api_token", researcher.username, "--revoke", stdout=StringIO())
    assert not _works(new)
