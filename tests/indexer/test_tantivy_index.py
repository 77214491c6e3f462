"""Tests for what only the tantivy index has: a directory shared by processes, and a schema stored on disk.

Ranking, replace-by-PMID, deletes and filters are the LexicalIndex contract (test_lexical_contract.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
import tantivy

from indexer.base import Hit, SearchFilters
from indexer.errors import BackendUnavailableError
from indexer.records import ArticleRecord
from indexer.tantivy_index import TantivyIndex

RECORDS = (
    ArticleRecord("101", "Metformin in diabetes", "Metformin lowered fasting glucose.", journal="BMJ", year=2001),
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


def build_pre_facet_index(path: Path) -> None:
    """An index as the release before facets wrote it: pmid, title and body only."""
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("pmid", stored=True, tokenizer_name="raw")
    builder.add_text_field("title", stored=False, tokenizer_name="en_stem")
    builder.add_text_field("body", stored=False, tokenizer_name="en_stem")
    path.mkdir(parents=True)
    old = tantivy.Index(builder.build(), path=str(path))
    writer = old.writer(16 * 1024 * 1024, 1)
    writer.add_document(tantivy.Document(pmid="1", title="Aspirin", body="Aspirin for pain."))
    writer.commit()
    writer.wait_merging_threads()


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


def test_the_index_and_its_facets_persist_after_close_and_reopen(index: TantivyIndex, tmp_path: Path) -> None:
    index.close()

    reopened = TantivyIndex(tmp_path / "tantivy")

    assert reopened.count() == len(RECORDS)
    assert pmids(reopened.search("warfarin", limit=10)) == ["103"]
    in_bmj_by_2001 = SearchFilters(journals=("BMJ",), year_to=2001)
    assert pmids(reopened.search("metformin glucose", limit=10, filters=in_bmj_by_2001)) == ["101"]


@pytest.mark.parametrize(
    "use",
    [
        lambda index: index.warm_up(),
        lambda index: index.count(),
        lambda index: index.search("aspirin", limit=10),
        lambda index: index.add(RECORDS),
    ],
    ids=["warm_up", "count", "search", "add"],
)
def test_it_refuses_an_index_built_with_an_older_schema_and_asks_for_a_rebuild(
    tmp_path: Path, use: Callable[[TantivyIndex], object]
) -> None:
    build_pre_facet_index(tmp_path / "old")

    with pytest.raises(BackendUnavailableError, match=r"older version.*rebuilt.*re-ingest"):
        use(TantivyIndex(tmp_path / "old"))


def test_it_leaves_an_index_with_an_older_schema_untouched(tmp_path: Path) -> None:
    build_pre_facet_index(tmp_path / "old")

    with pytest.raises(BackendUnavailableError):
        TantivyIndex(tmp_path / "old").add(RECORDS)

    assert tantivy.Index.open(str(tmp_path / "old")).searcher().num_docs == 1
