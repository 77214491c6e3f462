"""A missing role or a hidden page answers with the site's own page, saying what to do, and never leaks the id."""

from __future__ import annotations

import pytest
from django.test import Client

from webapp.qa.models import Question

pytestmark = pytest.mark.django_db


def test_a_researcher_on_the_review_queue_gets_a_403_page_naming_the_role(researcher_client: Client) -> None:
    response = researcher_client.get("/review/")
    assert response.status_code == 403
    page = response.content.decode()
    assert "You cannot open this page" in page
    assert "reviewer role" in page


def test_someone_elses_question_is_a_plain_404(researcher_client: Client) -> None:
    question = Question.objects.create(text="<script>secret</script> question", status=Question.Status.DONE)
    response = researcher_client.get(f"/questions/{question.pk}/")
    assert response.status_code == 404
    assert "secret" not in response.content.decode()
    assert "Not found" in response.content.decode()


def test_anonymous_visitors_are_sent_to_sign_in(client: Client) -> None:
    response = client.get("/history/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=/history/")
