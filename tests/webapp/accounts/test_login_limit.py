"""The limit on failed sign-ins (django-axes): per username and address, on the sign-in page and the API alike."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import User
from django.test import Client, RequestFactory
from django.utils import timezone
from pytest_django.fixtures import Settings
from rest_framework.test import APIClient

from webapp.accounts.client_address import forwarded_client_address, socket_client_address
from webapp.accounts.roles import RESEARCHER, REVIEWER
from webapp.config_groups import DeploymentConfig

PASSWORD = "a-long-test-password"  # role_users' password
LOCKED_OUT = "Too many failed sign-ins for this account from your address. Try again in 15 minutes."


@pytest.fixture(autouse=True)
def five_tries_fifteen_minutes(settings: Settings) -> None:
    """The defaults, pinned: the test settings come from the environment, which may say otherwise."""
    settings.AXES_ENABLED = True
    settings.AXES_FAILURE_LIMIT = 5
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)
    settings.AXES_CLIENT_IP_CALLABLE = "webapp.accounts.client_address.socket_client_address"  # no proxy in front


def _sign_in(client: Client, username: str, password: str) -> int:
    return client.post("/accounts/login/", {"username": username, "password": password}).status_code


def _token(client: APIClient, username: str, password: str) -> int:
    return client.post("/api/v1/auth/token", {"username": username, "password": password}, format="json").status_code


def _signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def test_five_wrong_passwords_lock_the_account_out_with_our_page_even_for_the_right_one(
    role_users: dict[str, User],
) -> None:
    client = Client()
    username = role_users[RESEARCHER].username

    assert [_sign_in(client, username, "wrong") for _ in range(4)] == [200] * 4  # the form again, with its error
    assert _sign_in(client, username, "wrong") == 429  # the fifth reaches the limit
    response = client.post("/accounts/login/", {"username": username, "password": PASSWORD})

    assert response.status_code == 429
    assert LOCKED_OUT in response.content.decode()
    assert "registration/locked_out.html" in [template.name for template in response.templates]
    assert not _signed_in(client)


def test_another_username_from_the_same_address_is_not_locked_out(role_users: dict[str, User]) -> None:
    client = Client()
    for _ in range(5):
        _sign_in(client, role_users[RESEARCHER].username, "wrong")

    assert _sign_in(client, role_users[REVIEWER].username, PASSWORD) == 302
    assert _signed_in(client)


def test_the_same_username_from_another_address_is_not_locked_out(role_users: dict[str, User]) -> None:
    username = role_users[RESEARCHER].username
    for _ in range(5):
        _sign_in(Client(REMOTE_ADDR="192.0.2.1"), username, "wrong")

    assert _sign_in(Client(REMOTE_ADDR="192.0.2.1"), username, PASSWORD) == 429
    assert _sign_in(Client(REMOTE_ADDR="192.0.2.2"), username, PASSWORD) == 302


def test_a_successful_sign_in_before_the_limit_starts_the_count_again(role_users: dict[str, User]) -> None:
    username = role_users[RESEARCHER].username
    for _ in range(4):
        _sign_in(Client(), username, "wrong")
    assert _sign_in(Client(), username, PASSWORD) == 302

    assert [_sign_in(Client(), username, "wrong") for _ in range(4)] == [200] * 4
    assert _sign_in(Client(), username, PASSWORD) == 302


def test_the_lockout_ends_once_the_cooloff_has_passed(role_users: dict[str, User]) -> None:
    username = role_users[RESEARCHER].username
    for _ in range(5):
        _sign_in(Client(), username, "wrong")
    assert _sign_in(Client(), username, PASSWORD) == 429

    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))

    assert _sign_in(Client(), username, PASSWORD) == 302


def test_the_api_token_exchange_is_refused_with_429_json_past_the_limit(role_users: dict[str, User]) -> None:
    client = APIClient()
    username = role_users[RESEARCHER].username

    assert [_token(client, username, "wrong") for _ in range(5)] == [400] * 4 + [429]
    response = client.post("/api/v1/auth/token", {"username": username, "password": PASSWORD}, format="json")

    assert response.status_code == 429
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": LOCKED_OUT}
    assert response["Retry-After"] == str(15 * 60)
    assert "token" not in response.json()


def test_the_page_and_the_api_share_one_count(role_users: dict[str, User]) -> None:
    username = role_users[RESEARCHER].username
    for _ in range(3):
        _sign_in(Client(), username, "wrong")
    for _ in range(2):
        _token(APIClient(), username, "wrong")

    assert _sign_in(Client(), username, PASSWORD) == 429
    assert _token(APIClient(), username, PASSWORD) == 429


def test_a_token_exchange_before_the_limit_starts_the_count_again(role_users: dict[str, User]) -> None:
    username = role_users[RESEARCHER].username
    for _ in range(4):
        _token(APIClient(), username, "wrong")
    assert _token(APIClient(), username, PASSWORD) == 200

    assert [_token(APIClient(), username, "wrong") for _ in range(4)] == [400] * 4
    assert _token(APIClient(), username, PASSWORD) == 200


def test_a_limit_of_zero_turns_the_lockout_off(settings: Settings, role_users: dict[str, User]) -> None:
    settings.AXES_ENABLED = False  # what VERIMED_LOGIN_FAILURE_LIMIT=0 sets
    username = role_users[RESEARCHER].username
    client = Client()

    assert [_sign_in(client, username, "wrong") for _ in range(8)] == [200] * 8
    assert _token(APIClient(), username, PASSWORD) == 200
    assert _sign_in(client, username, PASSWORD) == 302
    assert not AccessAttempt.objects.exists()


PROXY = "10.0.0.1"


@pytest.fixture
def proxy_in_front(settings: Settings) -> None:
    """Production's choice behind the TLS proxy at PROXY (DJANGO_BEHIND_TLS_PROXY, VERIMED_TRUSTED_PROXIES)."""
    settings.AXES_CLIENT_IP_CALLABLE = "webapp.accounts.client_address.forwarded_client_address"
    settings.VERIMED = settings.VERIMED.replace(VERIMED_TRUSTED_PROXIES=f"{PROXY},192.0.2.128/25")


def _via_proxy(forwarded_for: str) -> Client:
    """A client whose every request comes from the proxy, with the X-Forwarded-For it passes on."""
    return Client(REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=forwarded_for)


@pytest.mark.usefixtures("proxy_in_front")
def test_behind_the_proxy_only_the_address_it_appended_counts(role_users: dict[str, User]) -> None:
    username = role_users[RESEARCHER].username
    # A guesser forges a new first entry for every try; the proxy appends the address it really saw.
    for forged in range(5):
        _sign_in(_via_proxy(f"198.51.100.{forged}, 203.0.113.7"), username, "wrong")

    assert _sign_in(_via_proxy("203.0.113.7"), username, PASSWORD) == 429
    assert _sign_in(_via_proxy("203.0.113.8"), username, PASSWORD) == 302


@pytest.mark.usefixtures("proxy_in_front")
def test_a_client_that_reaches_the_app_past_the_proxy_cannot_pick_a_new_address_for_every_try(
    role_users: dict[str, User],
) -> None:
    username = role_users[RESEARCHER].username
    for forged in range(5):
        _sign_in(Client(REMOTE_ADDR="198.51.100.9", HTTP_X_FORWARDED_FOR=f"203.0.113.{forged}"), username, "wrong")

    direct = Client(REMOTE_ADDR="198.51.100.9", HTTP_X_FORWARDED_FOR="203.0.113.200")
    assert _sign_in(direct, username, PASSWORD) == 429
    assert (
        _token(APIClient(REMOTE_ADDR="198.51.100.9", HTTP_X_FORWARDED_FOR="203.0.113.201"), username, PASSWORD) == 429
    )


@pytest.mark.usefixtures("proxy_in_front")
@pytest.mark.parametrize(
    ("peer", "forwarded_for", "expected"),
    [
        (PROXY, "203.0.113.7", "203.0.113.7"),
        (PROXY, "198.51.100.1, 203.0.113.7", "203.0.113.7"),
        (PROXY, "198.51.100.1,2001:db8::1", "2001:db8::1"),
        (PROXY, "", PROXY),  # no header: the socket's peer
        (PROXY, "203.0.113.7, not-an-address", PROXY),
        ("192.0.2.200", "203.0.113.7", "203.0.113.7"),  # a proxy inside a trusted network
        # Not the proxy: the header is the client's own word.
        ("198.51.100.9", "203.0.113.7", "198.51.100.9"),
        ("192.0.2.1", "203.0.113.7", "192.0.2.1"),  # beside the trusted network, not in it
        ("2001:db8::9", "203.0.113.7", "2001:db8::9"),
    ],
)
def test_the_forwarded_address_counts_only_from_a_trusted_proxy(peer: str, forwarded_for: str, expected: str) -> None:
    request = RequestFactory().get("/", REMOTE_ADDR=peer, HTTP_X_FORWARDED_FOR=forwarded_for)

    assert forwarded_client_address(request) == expected


def test_only_the_loopback_proxy_is_trusted_by_default() -> None:
    assert [str(network) for network in DeploymentConfig().trusted_proxies] == ["127.0.0.1/32", "::1/128"]


def test_without_the_proxy_the_forwarded_header_is_the_clients_word_and_ignored() -> None:
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.7")

    assert socket_client_address(request) == "10.0.0.1"
