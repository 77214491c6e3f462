"""Production refuses a DJANGO_SECRET_KEY that ships with the code or is short (config.refuse_weak_secret_key)."""

from __future__ import annotations

import re
import secrets

import pytest
from django.core.exceptions import ImproperlyConfigured

from tests.support import REPO
from webapp.config import EMBEDDED_SECRET_KEY, refuse_weak_secret_key


def _env_example_secret_key() -> str:
    found = re.search(r"^DJANGO_SECRET_KEY=(.*)$", (REPO / ".env.example").read_text(), flags=re.MULTILINE)
    assert found, ".env.example no longer sets DJANGO_SECRET_KEY"
    return found.group(1)


def test_production_refuses_the_placeholder_that_env_example_ships() -> None:
    with pytest.raises(ImproperlyConfigured, match=r"DJANGO_SECRET_KEY is \.env\.example's placeholder"):
        refuse_weak_secret_key(_env_example_secret_key(), production=True)


@pytest.mark.parametrize("length", [12, 32, 49])
def test_production_refuses_a_key_shorter_than_50_characters(length: int) -> None:
    key = ("Zq7-" * 13)[:length]

    with pytest.raises(ImproperlyConfigured, match=f"has {length} characters, fewer than 50") as refused:
        refuse_weak_secret_key(key, production=True)
    assert key not in str(refused.value)  # start-up errors end up in logs


@pytest.mark.parametrize("key", ["", EMBEDDED_SECRET_KEY])
def test_production_refuses_an_unset_key_or_the_embedded_default(key: str) -> None:
    with pytest.raises(ImproperlyConfigured, match="DJANGO_SECRET_KEY is unset or the embedded default"):
        refuse_weak_secret_key(key, production=True)


def test_production_takes_a_long_random_key() -> None:
    refuse_weak_secret_key(secrets.token_urlsafe(50)[:50], production=True)


def test_the_embedded_profile_takes_any_key() -> None:
    for key in ("", EMBEDDED_SECRET_KEY, _env_example_secret_key(), "short"):
        refuse_weak_secret_key(key, production=False)
