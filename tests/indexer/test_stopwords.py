"""Tests for turning a user's question into BM25 query terms."""

from __future__ import annotations

import pytest

from indexer.stopwords import query_terms, stopwords


def test_it_removes_english_stopwords_and_question_words() -> None:
    terms = query_terms("What is the role of metformin in the treatment of type 2 diabetes?")

    assert terms == ["metformin", "treatment", "type", "2", "diabetes"]


@pytest.mark.parametrize("word", ["role", "does", "do", "which", "what", "how", "why", "whether", "used", "use"])
def test_it_treats_each_question_word_as_a_stopword(word: str) -> None:
    assert word in stopwords()
    assert query_terms(f"{word} aspirin") == ["aspirin"]


def test_it_lower_cases_terms() -> None:
    assert query_terms("BRCA1 Mutations") == ["brca1", "mutations"]


def test_it_drops_repeats_and_keeps_the_order_of_first_appearance() -> None:
    terms = query_terms("insulin glucose Insulin liver GLUCOSE insulin")

    assert terms == ["insulin", "glucose", "liver"]


def test_it_strips_query_syntax_characters_leaving_only_alphanumerics() -> None:
    terms = query_terms('"AND (x) OR y:*"')

    assert terms == ["x", "y"]


@pytest.mark.parametrize(
    "text",
    [
        'title:"heart failure" AND -placebo',
        "IL-6 [receptor] {blocker}^2 ~ +tocilizumab",
        "p53/MDM2 && !nutlin || 'cancer'",
        "covid-19\\* OR sars-cov-2",
    ],
)
def test_no_syntax_character_survives(text: str) -> None:
    terms = query_terms(text)

    assert terms
    assert all(term.isalnum() and term == term.lower() for term in terms)


def test_boolean_operators_are_dropped_as_stopwords() -> None:
    assert query_terms("asthma AND steroids OR NOT placebo") == ["asthma", "steroids", "placebo"]


@pytest.mark.parametrize("text", ["", "   ", "?!", "the of and", "What is it?", "(*) : ~ ^"])
def test_it_returns_nothing_when_only_stopwords_or_punctuation_remain(text: str) -> None:
    assert query_terms(text) == []


def test_it_keeps_non_ascii_letters_inside_a_word() -> None:
    # The index tokenizer keeps "sjögren" whole; splitting it into "sj" + "gren" would make it unfindable.
    assert query_terms("Sjögren syndrome and Ménière disease") == ["sjögren", "syndrome", "ménière", "disease"]
