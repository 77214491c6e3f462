"""One length limit for a question: the ask form's text box, the API and `question_create` take it from
VERIMED_MAX_QUESTION_CHARS."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from pytest_django.fixtures import Settings

from webapp.qa.services import admission

pytestmark = pytest.mark.django_db


def _form_limit(client: Client) -> int:
    page = client.get("/").content.decode()
    box = re.search(r'<textarea id="question" name="question"[^>]*maxlength="(\d+)"', page)
    assert box, "the ask form has a question box with a maxlength"
    return int(box.group(1))


@pytest.mark.parametrize("limit", [2000, 300])
def test_the_ask_form_and_the_service_agree_on_the_longest_question(
    settings: Settings, researcher_client: Client, limit: int
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MAX_QUESTION_CHARS=limit)
    form_limit = _form_limit(researcher_client)

    assert form_limit == limit
    assert admission.question_validate(text="x" * form_limit) == "x" * form_limit
    with pytest.raises(admission.QuestionRejectedError, match=f"limited to {limit:,} characters"):
        admission.question_validate(text="x" * (form_limit + 1))


def test_the_api_refuses_what_the_form_would_not_let_through(settings: Settings, researcher_client: Client) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MAX_QUESTION_CHARS=300)
    longest = "x" * _form_limit(researcher_client)

    refused = researcher_client.post("/api/v1/questions", {"question": longest + "x"}, content_type="application/json")

    assert refused.status_code == 400
    assert "limited to 300 characters" in refused.json()["question"][0]
