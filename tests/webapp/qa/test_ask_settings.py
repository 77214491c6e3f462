"""Search settings on the ask page: chosen values are stored on the question and shown on its page; bad ones are
refused with a message and nothing is stored."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from django.core.cache import cache
from django.test import Client

from indexer.hybrid import HybridSettings
from webapp.corpus.models import Article
from webapp.qa.models import Question

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_filter_choices() -> Iterator[None]:
    cache.clear()  # the journal and type choices are cached between requests
    yield
    cache.clear()


@pytest.fixture
def articles() -> None:
    for pmid, journal, types in [
        ("1", "Diabetes Care", ["Journal Article", "Randomized Controlled Trial"]),
        ("2", "Diabetes Care", ["Journal Article"]),
        ("3", "Cancer Research", ["Review"]),
        ("4", "<script>alert('journal')</script>", ["Journal Article"]),
    ]:
        Article.objects.create(
            pmid=pmid, title=f"Article {pmid}", abstract="Text.", journal=journal, publication_types=types
        )


def test_chosen_settings_are_stored_on_the_question(researcher_client: Client, articles: None) -> None:
    response = researcher_client.post(
        "/",
        {
            "question": "Does metformin cause lactic acidosis?",
            "mode": "hybrid",
            "fusion": "rrf",
            "top_k": "5",
            "year_from": "2009",
            "year_to": "2011",
            "journals": ["Diabetes Care"],
            "publication_types": ["Randomized Controlled Trial", "Journal Article"],
            "mesh": "Diabetes Mellitus, Type 2; Metformin ;",
            "include_retracted": "on",
        },
    )
    question = Question.objects.get()
    assert response.status_code == 302
    retrieval = question.settings["retrieval"]
    assert (retrieval["mode"], retrieval["fusion"], retrieval["top_k"]) == ("hybrid", "rrf", 5)
    assert (retrieval["lexical_weight"], retrieval["semantic_weight"]) == (0.5, 0.5)
    assert retrieval["candidates_per_leg"] == 50, "what the form does not offer stays the site's default"
    assert question.settings["filters"] == {
        "year_from": 2009,
        "year_to": 2011,
        "journals": ["Diabetes Care"],
        "publication_types": ["Randomized Controlled Trial", "Journal Article"],
        "mesh": ["Diabetes Mellitus, Type 2", "Metformin"],
        "sources": "pubmed",
        "include_retracted": True,
        "prefer_stronger_designs": False,
    }


def test_a_semantic_leaning_preset_sets_both_weights(researcher_client: Client) -> None:
    researcher_client.post("/", {"question": "What does everolimus inhibit?", "fusion": "semantic", "top_k": "20"})
    retrieval = Question.objects.get().settings["retrieval"]
    assert (retrieval["fusion"], retrieval["lexical_weight"], retrieval["semantic_weight"]) == ("weighted", 0.3, 0.7)
    assert retrieval["top_k"] == 20


def test_the_question_page_says_how_it_searched(researcher_client: Client, articles: None) -> None:
    researcher_client.post(
        "/",
        {"question": "Q?", "mode": "lexical", "top_k": "15", "year_from": "2000", "journals": ["Cancer Research"]},
    )
    page = researcher_client.get(f"/questions/{Question.objects.get().pk}/").content.decode()
    assert (
        "Lexical only (BM25) · query expanded from the first results · 15 abstracts · years 2000\u2013… · journals: "
        "Cancer Research"
    ) in page


def test_retracted_papers_stay_out_and_designs_unordered_unless_ticked(researcher_client: Client) -> None:
    page = researcher_client.get("/").content.decode()
    assert 'name="include_retracted"' in page
    assert 'name="include_retracted" checked' not in page
    assert "no shared benchmark carries publication types" in page

    researcher_client.post("/", {"question": "Q?"})
    filters = Question.objects.get().settings["filters"]
    assert (filters["include_retracted"], filters["prefer_stronger_designs"]) == (False, False)


def test_the_question_page_says_when_retracted_papers_were_included(researcher_client: Client) -> None:
    researcher_client.post("/", {"question": "Q?", "include_retracted": "on", "prefer_stronger_designs": "on"})
    page = researcher_client.get(f"/questions/{Question.objects.get().pk}/").content.decode()
    assert "retracted papers included · stronger designs first" in page


@pytest.mark.parametrize(
    ("field", "values", "message"),
    [
        ("year_to", {"year_from": "2015", "year_to": "2010"}, "The end year (2010) is before the start year (2015)."),
        ("year_from", {"year_from": "1200"}, "greater than or equal to 1800"),
        ("top_k", {"top_k": "50"}, "Select a valid choice. 50 is not one of the available choices."),
        ("journals", {"journals": ["Nature"]}, "Select a valid choice. Nature is not one of the available choices."),
        ("mode", {"mode": "psychic"}, "Select a valid choice."),
        ("mesh", {"mesh": ";".join(f"Term {n}" for n in range(21))}, "At most 20 MeSH terms; you gave 21."),
    ],
)
def test_invalid_settings_are_refused_with_a_message(
    researcher_client: Client, articles: None, field: str, values: dict[str, object], message: str
) -> None:
    response = researcher_client.post("/", {"question": "Is this stored?", **values})
    page = response.content.decode()
    assert response.status_code == 400
    assert message in page
    assert f'href="#id_{field}"' in page, "the error summary links to the field"
    assert '<details class="search-settings" open>' in page, "the settings open to show the error"
    assert not Question.objects.exists()


def test_a_bad_question_and_good_settings_keep_the_settings(researcher_client: Client) -> None:
    response = researcher_client.post("/", {"question": "  ", "top_k": "15", "year_from": "2001"})
    page = response.content.decode()
    assert response.status_code == 400
    assert "Please type a question." in page
    assert 'value="2001"' in page
    assert '<option value="15" selected>' in page


def test_the_settings_sit_in_a_labelled_details_under_the_question(researcher_client: Client, articles: None) -> None:
    page = researcher_client.get("/").content.decode()
    assert page.index('id="question"') < page.index("<summary>Search settings</summary>")
    fields = ("year_from", "year_to", "journals", "publication_types", "mesh", "fusion", "top_k")
    for field in (*fields, "include_retracted", "prefer_stronger_designs"):
        assert f'<label for="id_{field}"' in page
    assert "<legend>Search mode:</legend>" in page
    assert "<legend>Search in:</legend>" in page
    assert re.search(r'name="sources" value="pubmed"[^>]*checked', page), "PubMed alone by default"
    assert '<option value="10" selected>' in page, "ten abstracts by default"
    assert 'value="verifai" selected' in page
    assert "Lexical-leaning 0.7/0.3 (VerifAI)" in page


def test_journal_and_type_choices_come_from_the_index_most_frequent_first(
    researcher_client: Client, articles: None
) -> None:
    page = researcher_client.get("/").content.decode()
    assert page.index("Diabetes Care (2)") < page.index("Cancer Research (1)")
    assert page.index("Journal Article (3)") < page.index("Randomized Controlled Trial (1)") < page.index("Review (1)")
    assert "&lt;script&gt;alert(&#x27;journal&#x27;)&lt;/script&gt;" in page
    assert "<script>alert('journal')" not in page


@pytest.mark.parametrize(("choice", "stored"), [("on", True), ("off", False)])
def test_the_rerank_choice_is_stored_on_the_question(researcher_client: Client, choice: str, stored: bool) -> None:
    researcher_client.post("/", {"question": "What does everolimus inhibit?", "rerank": choice})

    assert Question.objects.get().settings["retrieval"]["rerank"] is stored


def test_a_form_without_the_rerank_choice_asks_with_the_sites_default(researcher_client: Client) -> None:
    researcher_client.post("/", {"question": "What does everolimus inhibit?"})

    assert Question.objects.get().settings["retrieval"]["rerank"] is HybridSettings().rerank


def test_the_question_page_says_it_reranked_and_how_many(researcher_client: Client) -> None:
    researcher_client.post("/", {"question": "Q?", "mode": "semantic", "rerank": "on", "top_k": "5"})

    page = researcher_client.get(f"/questions/{Question.objects.get().pk}/").content.decode()
    candidates = HybridSettings().rerank_candidates
    assert (
        f"Semantic only (dense vectors) · reranked (top {candidates}) · 5 abstracts" in page
    )  # no expansion: no lexical leg
