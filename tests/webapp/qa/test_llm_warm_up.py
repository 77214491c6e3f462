"""Tests for the worker's warm-up of the language model: in the background, never fatal."""

from __future__ import annotations

import logging

import pytest
from pytest_django.fixtures import Settings

from webapp.qa.llm import warm_up_llm_in_background


def test_the_fake_model_needs_no_warm_up(settings: Settings) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_LLM_SERVER_KIND="fake")

    assert warm_up_llm_in_background() is None


def test_a_server_that_is_down_is_logged_and_left_to_the_first_question(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_LLM_SERVER_KIND="llama.cpp")
    settings.VERIMED = settings.VERIMED.replace(VERIMED_LLM_BASE_URL="http://127.0.0.1:9/v1")
    settings.VERIMED = settings.VERIMED.replace(VERIMED_LLM_MAX_RETRIES=0)

    with caplog.at_level(logging.WARNING, logger="webapp.qa.llm"):
        thread = warm_up_llm_in_background()
        assert thread is not None
        thread.join(timeout=30)

    assert not thread.is_alive()
    assert "could not warm the language model's prompt prefix" in caplog.text
