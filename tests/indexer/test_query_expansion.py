"""Pseudo-relevance feedback's choice of words: what stands out in the top results against the other candidates."""

from __future__ import annotations

from indexer.query_expansion import candidate_texts, expansion_terms

TEXTS = [
    "Everolimus inhibits mTOR in kidney transplant recipients.",
    "mTOR inhibition by everolimus lowers rejection in kidney grafts.",
    "Rapamycin and everolimus inhibit mTOR signalling.",
    "Patients were followed for 12 months in the study.",
    "The study enrolled patients in 2010.",
    "Patients in the study were adults.",
]


def test_words_shared_by_the_top_results_and_rare_among_the_candidates_are_chosen() -> None:
    terms = expansion_terms("What does everolimus inhibit?", TEXTS, feedback=3, terms=4, weight=0.8)

    assert set(terms) == {"rapamycin", "signalling", "kidney", "mtor"}
    assert set(terms.values()) == {0.8}
    # Words of the other candidates only never come in, however often they occur there.
    assert not {"patients", "study"} & set(expansion_terms("everolimus", TEXTS, feedback=3, terms=50, weight=0.8))


def test_the_querys_own_words_numbers_and_short_words_are_never_added() -> None:
    terms = expansion_terms("everolimus mTOR", TEXTS, feedback=6, terms=50, weight=0.5)

    assert "everolimus" not in terms
    assert "mtor" not in terms
    assert not any(word.isdigit() or len(word) <= 2 for word in terms)


def test_a_word_in_every_candidate_is_never_added() -> None:
    everywhere = [f"{text} Cells." for text in TEXTS]

    assert "cells" not in expansion_terms("everolimus", everywhere, feedback=6, terms=50, weight=0.5)


def test_no_candidates_give_no_expansion() -> None:
    assert expansion_terms("everolimus", [], feedback=3, terms=5, weight=0.8) == {}


def test_candidate_texts_keep_the_candidates_order_and_skip_unknown_ones() -> None:
    abstracts = {"2": ("T2", "A2"), "1": ("T1", "A1")}

    assert candidate_texts(["1", "3", "2"], abstracts) == ["T1 A1", "T2 A2"]
