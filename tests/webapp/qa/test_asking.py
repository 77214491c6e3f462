"""Asking on the page: bad questions are refused with a message, good ones are stored and queued."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from webapp.qa.management.commands.ask import _citation_label
from webapp.qa.models import Question
from webapp.qa.selectors import question_wait_finished

pytestmark = pytest.mark.django_db


def test_it_refuses_an_empty_question_with_a_message(researcher_client: Client) -> None:
    response = researcher_client.post("/", {"question": "   "})
    assert response.status_code == 400
    assert "Please type a question." in response.content.decode()
    assert not Question.objects.exists()


def test_it_refuses_a_question_over_2000_characters(researcher_client: Client) -> None:
    response = researcher_client.post("/", {"question": "why " * 600})
    assert response.status_code == 400
    assert "limited to 2,000 characters" in response.content.decode()
    assert not Question.objects.exists()


def test_it_accepts_a_question_at_the_limit_and_queues_it(
    researcher_client: Client, django_capture_on_commit_callbacks: object
) -> None:
    text = "a" * 2000
    with django_capture_on_commit_callbacks() as callbacks:  # type: ignore[operator]
        response = researcher_client.post("/", {"question": text})
    question = Question.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/questions/{question.pk}/"
    assert question.text == text
    assert question.status == Question.Status.QUEUED
    assert question.settings["retrieval"] == {
        "top_k": 10,
        "mode": "hybrid",
        "fusion": "weighted",
        "lexical_weight": 0.7,
        "semantic_weight": 0.3,
        "rrf_k": 60,
        "candidates_per_leg": 50,
        "expand_query": True,
        "expansion_feedback": 20,
        "expansion_terms": 20,
        "expansion_weight": 0.8,
        "rerank": False,
        "rerank_candidates": 10,
    }
    assert len(callbacks) == 1, "the pipeline is enqueued once the row is committed"


def test_the_ask_command_refuses_bad_questions() -> None:
    with pytest.raises(CommandError, match="Please type a question"):
        call_command("ask", "")
    with pytest.raises(CommandError, match="limited to 2,000"):
        call_command("ask", "x" * 2001)


def test_the_ask_command_names_the_leaning_of_an_unclear_citation() -> None:
    assert _citation_label("123", {"label": "UNCLEAR", "leaning": "SUPPORT"}) == "123=UNCLEAR leaning SUPPORT"
    assert _citation_label("123", {"label": "SUPPORT", "leaning": "SUPPORT"}) == "123=SUPPORT"
    assert _citation_label("999", {"label": "NO_REFERENCE", "leaning": None}) == "999=NO_REFERENCE"


def test_the_ask_page_lists_your_recent_questions_escaped(
    researcher_client: Client, role_users: dict[str, User]
) -> None:
    Question.objects.create(text="<b>bold</b> question", status=Question.Status.DONE, user=role_users["researcher"])
    Question.objects.create(text="someone else's question", status=Question.Status.DONE)
    page = researcher_client.get("/").content.decode()
    assert "&lt;b&gt;bold&lt;/b&gt; question" in page
    assert "<b>bold</b>" not in page
    assert "someone else" not in page


def test_waiting_for_a_question_ends_when_it_is_finished_or_the_time_is_up() -> None:
    queued = Question.objects.create(text="Does aspirin help?", settings={})
    done = Question.objects.create(text="Does metformin help?", settings={}, status=Question.Status.DONE)
    failed = Question.objects.create(text="Does zinc help?", settings={}, status=Question.Status.FAILED)

    assert not question_wait_finished(question_id=queued.pk, timeout=0.2, poll_seconds=0.05)
    assert question_wait_finished(question_id=done.pk, timeout=0.2, poll_seconds=0.05)
    assert question_wait_finished(question_id=failed.pk, timeout=0.2, poll_seconds=0.05)


def test_the_ask_command_fails_a_question_no_worker_finished_in_time() -> None:
    with pytest.raises(CommandError, match="no worker finished the question within 0 s"):
        call_command("ask", "Does aspirin help after a heart attack?", "--timeout", "0")

    question = Question.objects.get()
    assert question.status == Question.Status.FAILED
    assert "no answer within 0 s" in question.error
