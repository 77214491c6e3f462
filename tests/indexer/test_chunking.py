"""Tests for chunking title + abstract to the embedding model's window, measured with MiniLM's own tokenizer."""

from __future__ import annotations

import pytest

from indexer.chunking import Chunker, split_for_chunks
from indexer.embedder import SentenceTransformerEmbedder
from indexer.records import ArticleRecord, MeshHeading

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model

TITLE = "Metformin and cardiovascular outcomes in type 2 diabetes"


@pytest.fixture(scope="module")
def embedder(minilm: SentenceTransformerEmbedder) -> SentenceTransformerEmbedder:
    return minilm


@pytest.fixture(scope="module")
def chunker(embedder: SentenceTransformerEmbedder) -> Chunker:
    return Chunker(embedder.token_lengths, max_tokens=64)


def long_record(sentences: int) -> ArticleRecord:
    abstract = " ".join(
        f"In cohort {number} the investigators followed {number * 10} adults for glucose control and events."
        for number in range(1, sentences + 1)
    )
    return ArticleRecord("42", TITLE, abstract, journal="Diabetes Care", year=2019, mesh=(MeshHeading("Metformin"),))


def test_the_embedder_reports_minilms_window_and_counts_special_tokens(embedder: SentenceTransformerEmbedder) -> None:
    assert embedder.max_tokens == 256
    assert embedder.token_lengths(["metformin", ""]) == [embedder.token_lengths(["metformin"])[0], 2]


def test_a_short_article_is_one_chunk_of_its_whole_text(chunker: Chunker) -> None:
    record = ArticleRecord("1", "Aspirin", "Aspirin reduced pain.", year=2001, publication_types=("Review",))

    chunks = chunker.chunks([record])

    assert [(chunk.pmid, chunk.index, chunk.text) for chunk in chunks] == [("1", 0, record.text)]
    assert chunks[0].facets.year == 2001
    assert chunks[0].facets.publication_types == ("Review",)


def test_a_long_article_is_cut_at_sentence_boundaries_into_chunks_that_fit(
    chunker: Chunker, embedder: SentenceTransformerEmbedder
) -> None:
    record = long_record(12)

    chunks = chunker.chunks([record])

    assert len(chunks) > 2
    assert [chunk.index for chunk in chunks] == list(range(len(chunks)))
    assert max(embedder.token_lengths([chunk.text for chunk in chunks])) <= 64
    assert all(chunk.text.startswith(f"{TITLE}. In cohort") for chunk in chunks)
    # Every sentence lands in exactly one chunk, in order.
    bodies = " ".join(chunk.text.removeprefix(f"{TITLE}. ") for chunk in chunks)
    assert bodies == record.abstract
    assert {chunk.facets.mesh for chunk in chunks} == {("Metformin",)}


def test_a_sentence_longer_than_the_window_is_cut_by_words(
    chunker: Chunker, embedder: SentenceTransformerEmbedder
) -> None:
    run_on = " ".join(f"marker{number}" for number in range(200)) + "."
    record = ArticleRecord("7", "Short title", run_on)

    chunks = chunker.chunks([record])

    assert len(chunks) > 1
    assert max(embedder.token_lengths([chunk.text for chunk in chunks])) <= 64
    words = [word for chunk in chunks for word in chunk.text.removeprefix("Short title. ").split()]
    assert words == run_on.split()


def test_a_title_that_would_fill_the_window_is_left_out_of_the_chunks(chunker: Chunker) -> None:
    title = " ".join(["pharmacokinetics"] * 40)
    record = ArticleRecord("9", title, long_record(6).abstract)

    chunks = chunker.chunks([record])

    assert len(chunks) > 1
    assert not any(chunk.text.startswith("pharmacokinetics") for chunk in chunks)


def test_records_keep_their_order_and_ids_in_one_batch(chunker: Chunker) -> None:
    records = [ArticleRecord("a", "A", "One sentence."), long_record(10), ArticleRecord("b", "B", "Two.")]

    chunks = chunker.chunks(records)

    assert chunks[0].pmid == "a"
    assert chunks[-1].pmid == "b"
    assert {chunk.pmid for chunk in chunks[1:-1]} == {"42"}


def test_sentences_split_on_terminal_punctuation_before_a_capital_or_digit() -> None:
    text = "Glucose fell (p < 0.01). HbA1c fell too! Was it durable? 12 weeks later, yes. e.g. not here."

    assert split_for_chunks(text) == [
        "Glucose fell (p < 0.01).",
        "HbA1c fell too!",
        "Was it durable?",
        "12 weeks later, yes. e.g. not here.",
    ]


def test_a_window_too_small_to_hold_anything_is_refused(embedder: SentenceTransformerEmbedder) -> None:
    with pytest.raises(ValueError, match="at least 16"):
        Chunker(embedder.token_lengths, max_tokens=8)
