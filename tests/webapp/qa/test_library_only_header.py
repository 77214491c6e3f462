"""A question asked over the asker's library alone counts pages, not abstracts, in its header, and has no note on
PubMed's embedding coverage (verimed.js fills that note only where the page has it)."""

from __future__ import annotations

import pytest
from django.test import Client

from webapp.qa.models import Question
from webapp.qa.search_options import search_summary

pytestmark = pytest.mark.django_db


def _asked(client: Client, sources: str) -> str:
    client.post("/", {"question": "Does metformin cause lactic acidosis?", "top_k": "10"})
    question = Question.objects.get()
    question.settings["filters"]["sources"] = sources
    Question.objects.filter(pk=question.pk).update(settings=question.settings)
    return client.get(f"/questions/{question.pk}/").content.decode()


def test_a_library_only_question_says_pages_and_no_coverage_note(researcher_client: Client) -> None:
    page = _asked(researcher_client, "library")
    assert "In my library · " in page
    assert "· 10 pages" in page
    assert "10 abstracts" not in page
    assert "Retrieving pages" in page
    assert "semantic-coverage-note" not in page


def test_a_pubmed_question_says_abstracts_and_keeps_the_coverage_note(researcher_client: Client) -> None:
    page = _asked(researcher_client, "pubmed")
    assert "· 10 abstracts" in page
    assert "Retrieving abstracts" in page
    assert 'id="semantic-coverage-note"' in page


def test_a_question_over_both_names_both_units() -> None:
    settings = {"retrieval": {"mode": "lexical", "top_k": 5}, "filters": {"sources": "both"}}
    assert search_summary(settings).endswith("5 abstracts and pages")
