"""Tests for picking the abstract sentences that bear on a claim, with the real MiniLM embedder."""

from __future__ import annotations

import pytest

from indexer.embedder import SentenceTransformerEmbedder
from indexer.sentence_selection import select_evidence

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model

ABSTRACT_SENTENCES = (
    "We randomised 400 adults with type 2 diabetes to metformin or placebo.",
    "Metformin lowered HbA1c by 1.1 percentage points at 24 weeks.",
    "Gastrointestinal side effects were the most common reason for withdrawal.",
    "No cases of lactic acidosis occurred.",
    "Body weight fell slightly in the metformin group.",
)


@pytest.fixture(scope="module")
def embedder() -> SentenceTransformerEmbedder:
    embedder = SentenceTransformerEmbedder()
    embedder.warm_up()
    return embedder


def test_the_negated_sentence_is_selected_for_a_claim_it_contradicts(embedder: SentenceTransformerEmbedder) -> None:
    chosen = select_evidence("Several patients developed lactic acidosis.", ABSTRACT_SENTENCES, embedder=embedder)

    assert len(chosen) == 2
    assert 3 in chosen


def test_the_sentence_stating_the_claim_comes_first(embedder: SentenceTransformerEmbedder) -> None:
    chosen = select_evidence("Metformin lowered HbA1c.", ABSTRACT_SENTENCES, embedder=embedder)

    assert chosen[0] == 1


def test_it_returns_distinct_valid_indices_best_first(embedder: SentenceTransformerEmbedder) -> None:
    chosen = select_evidence(
        "Metformin reduced body weight.", ABSTRACT_SENTENCES, embedder=embedder, top_n=len(ABSTRACT_SENTENCES)
    )

    assert sorted(chosen) == list(range(len(ABSTRACT_SENTENCES)))
    assert chosen[0] == 4


def test_it_returns_nothing_for_no_sentences(embedder: SentenceTransformerEmbedder) -> None:
    assert select_evidence("Several patients developed lactic acidosis.", [], embedder=embedder) == []


def test_it_returns_every_sentence_when_there_are_fewer_than_top_n(embedder: SentenceTransformerEmbedder) -> None:
    assert select_evidence("Any claim.", ["Only one sentence."], embedder=embedder, top_n=3) == [0]


def test_sentences_of_only_stopwords_do_not_break_the_lexical_leg(embedder: SentenceTransformerEmbedder) -> None:
    chosen = select_evidence("The of and.", ["And the.", "Of a.", "Lactic acidosis."], embedder=embedder, top_n=3)

    assert sorted(chosen) == [0, 1, 2]


def test_it_is_deterministic(embedder: SentenceTransformerEmbedder) -> None:
    first = select_evidence("Weight fell on metformin.", ABSTRACT_SENTENCES, embedder=embedder, top_n=3)
    second = select_evidence("Weight fell on metformin.", ABSTRACT_SENTENCES, embedder=embedder, top_n=3)

    assert first == second


@pytest.mark.parametrize("lexical_weight", [0.0, 1.0])
def test_either_leg_alone_still_finds_the_lexical_match(
    embedder: SentenceTransformerEmbedder, lexical_weight: float
) -> None:
    chosen = select_evidence(
        "Lactic acidosis was reported.", ABSTRACT_SENTENCES, embedder=embedder, top_n=1, lexical_weight=lexical_weight
    )

    assert chosen == [3]


def test_identical_sentences_are_ordered_by_position(embedder: SentenceTransformerEmbedder) -> None:
    chosen = select_evidence("Aspirin helped.", ["Aspirin helped.", "Aspirin helped."], embedder=embedder)

    assert chosen == [0, 1]
