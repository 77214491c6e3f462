"""Tests for the tantivy BM25 index: ranking, replace-by-PMID, deletes and readers on the same directory."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from indexer.base import Hit
from indexer.records import ArticleRecord
from indexer.tantivy_index import TantivyIndex

RECORDS = (
    ArticleRecord("101", "Metformin in type 2 diabetes", "Metformin lowered fasting glucose in adults with diabetes."),
    ArticleRecord("102", "Inhaled corticosteroids for asthma", "Inhaled steroids reduced asthma exacerbations."),
    ArticleRecord("103", "Warfarin and stroke", "Warfarin prevented stroke in atrial fibrillation."),
    ArticleRecord("104", "Statins and cholesterol", "Statin therapy lowered LDL cholesterol by a third."),
)


@pytest.fixture
def index(tmp_path: Path) -> TantivyIndex:
    index = TantivyIndex(tmp_path / "tantivy")
    index.add(RECORDS)
    return index


def pmids(hits: list[Hit]) -> list[str]:
    return [hit.pmid for hit in hits]


def wait_for(condition: Callable[[], bool], *, timeout: float = 10.0) -> bool:
    """Poll `condition` until it holds or `timeout` passes (readers reload shortly after a commit)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return bool(condition())


def test_it_ranks_the_matching_document_first(index: TantivyIndex) -> None:
    hits = index.search("Does warfarin prevent stroke?", limit=10)

    assert pmids(hits)[0] == "103"
    assert hits[0].score > 0
    assert pmids(hits) == ["103"]  # no other document mentions warfarin or stroke


def test_it_orders_hits_by_descending_score(index: TantivyIndex) -> None:
    hits = index.search("metformin glucose cholesterol statin", limit=10)

    assert set(pmids(hits)) == {"101", "104"}
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)


def test_it_matches_stemmed_word_forms(index: TantivyIndex) -> None:
    assert pmids(index.search("exacerbation of asthmatic steroid", limit=10))[0] == "102"


def test_it_returns_at_most_limit_hits(index: TantivyIndex) -> None:
    hits = index.search("metformin asthma warfarin statin", limit=2)

    assert len(hits) == 2


def test_it_counts_the_documents(index: TantivyIndex) -> None:
    assert index.count() == len(RECORDS)


def test_re_adding_a_pmid_replaces_the_document_instead_of_duplicating_it(index: TantivyIndex) -> None:
    index.add([ArticleRecord("101", "Zinc and the common cold", "Zinc lozenges shortened colds by a day.")])

    assert index.count() == len(RECORDS)
    assert pmids(index.search("zinc lozenges", limit=10)) == ["101"]
    assert index.search("metformin", limit=10) == []


def test_a_pmid_repeated_within_one_batch_keeps_only_the_last_version(tmp_path: Path) -> None:
    index = TantivyIndex(tmp_path / "tantivy")

    index.add([ArticleRecord("7", "First", "Aspirin text."), ArticleRecord("7", "Second", "Ibuprofen text.")])

    assert index.count() == 1
    assert index.search("aspirin", limit=10) == []
    assert pmids(index.search("ibuprofen", limit=10)) == ["7"]


def test_delete_removes_the_document(index: TantivyIndex) -> None:
    index.delete(["103"])

    assert index.count() == len(RECORDS) - 1
    assert index.search("warfarin", limit=10) == []
    assert pmids(index.search("metformin", limit=10)) == ["101"]


def test_deleting_unknown_or_no_pmids_changes_nothing(index: TantivyIndex) -> None:
    index.delete([])
    index.delete(["999"])

    assert index.count() == len(RECORDS)


def test_adding_no_records_is_a_no_op(tmp_path: Path) -> None:
    index = TantivyIndex(tmp_path / "tantivy")

    index.add([])

    assert index.count() == 0


def test_non_numeric_ids_are_stored_and_deleted_exactly(tmp_path: Path) -> None:
    index = TantivyIndex(tmp_path / "tantivy")
    index.add([ArticleRecord("S2:123", "Gut microbiome", "The microbiome shifted."), ArticleRecord("123", "", "Else.")])

    assert pmids(index.search("microbiome", limit=10)) == ["S2:123"]
    index.delete(["123"])
    assert pmids(index.search("microbiome", limit=10)) == ["S2:123"]
    assert index.count() == 1


@pytest.mark.parametrize("query", ["", "   ", "the of and is", "What is it?", "?!", '"AND (*) OR :"', "-- ^~"])
def test_a_query_of_only_stopwords_or_punctuation_returns_nothing(index: TantivyIndex, query: str) -> None:
    assert index.search(query, limit=10) == []


def test_query_syntax_in_the_question_is_searched_as_plain_words(index: TantivyIndex) -> None:
    hits = index.search('title:"warfarin" AND (stroke OR -bleeding)^3', limit=10)

    assert pmids(hits) == ["103"]


def test_a_query_with_a_non_ascii_word_finds_the_document_that_contains_it(tmp_path: Path) -> None:
    index = TantivyIndex(tmp_path / "tantivy")
    index.add(
        [
            ArticleRecord("1", "Dry eyes in Sjögren syndrome", "Sjögren patients reported dry eyes."),
            ArticleRecord("2", "Vertigo", "Vertigo in older adults."),
        ]
    )

    assert pmids(index.search("Sjögren", limit=10)) == ["1"]


def test_a_second_index_object_on_the_same_path_sees_committed_documents(index: TantivyIndex, tmp_path: Path) -> None:
    reader = TantivyIndex(tmp_path / "tantivy")  # what another process (the worker) would open

    assert reader.count() == len(RECORDS)
    assert pmids(reader.search("inhaled corticosteroids", limit=10)) == ["102"]


def test_a_reader_sees_documents_committed_after_it_opened(index: TantivyIndex, tmp_path: Path) -> None:
    reader = TantivyIndex(tmp_path / "tantivy")
    assert reader.search("vaccine", limit=10) == []

    index.add([ArticleRecord("105", "Influenza vaccine", "The vaccine reduced influenza in older adults.")])

    assert wait_for(lambda: pmids(reader.search("vaccine", limit=10)) == ["105"])
    assert reader.count() == len(RECORDS) + 1


def test_a_reader_stops_finding_documents_deleted_by_another_object(index: TantivyIndex, tmp_path: Path) -> None:
    reader = TantivyIndex(tmp_path / "tantivy")
    assert pmids(reader.search("statin", limit=10)) == ["104"]

    index.delete(["104"])

    assert wait_for(lambda: reader.search("statin", limit=10) == [])


def test_the_index_persists_after_close_and_reopen(index: TantivyIndex, tmp_path: Path) -> None:
    index.close()

    reopened = TantivyIndex(tmp_path / "tantivy")

    assert reopened.count() == len(RECORDS)
    assert pmids(reopened.search("warfarin", limit=10)) == ["103"]


def test_a_term_in_the_title_outranks_the_same_term_only_in_the_body(tmp_path: Path) -> None:
    index = TantivyIndex(tmp_path / "tantivy")
    in_title = ArticleRecord("1", "Hypertension outcomes", "Adults were followed for five years and examined yearly.")
    in_body = ArticleRecord("2", "Long term outcomes", "Adults with hypertension were followed for five years.")
    index.add([in_body, in_title])

    hits = index.search("hypertension", limit=10)

    assert pmids(hits) == ["1", "2"]
    assert hits[0].score > hits[1].score


def test_the_title_boost_raises_only_the_title_match_score(tmp_path: Path) -> None:
    records = [
        ArticleRecord("1", "Hypertension outcomes", "Adults were followed for five years and examined yearly."),
        ArticleRecord("2", "Long term outcomes", "Adults with hypertension were followed for five years."),
    ]
    boosted = TantivyIndex(tmp_path / "boosted", title_boost=3.0)
    plain = TantivyIndex(tmp_path / "plain", title_boost=1.0)
    boosted.add(records)
    plain.add(records)

    boosted_scores = {hit.pmid: hit.score for hit in boosted.search("hypertension", limit=10)}
    plain_scores = {hit.pmid: hit.score for hit in plain.search("hypertension", limit=10)}

    assert boosted_scores["1"] > plain_scores["1"]
    assert boosted_scores["2"] == pytest.approx(plain_scores["2"])
