"""Tests for ingestion into a sink, tantivy and qdrant-edge with the real MiniLM embedder."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from indexer.base import Vectors
from indexer.embedder import SentenceTransformerEmbedder
from indexer.errors import CorpusFormatError
from indexer.ingest import STAGES, IngestReport, estimate_records, ingest_paths
from indexer.qdrant_edge_index import QdrantEdgeIndex
from indexer.records import ArticleRecord, Notice
from indexer.tantivy_index import TantivyIndex

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model

# Every abstract mentions "patients", so one lexical query lists every indexed PMID.
SHARED_WORD = "patients"


def pubmed_article(pmid: str, title: str, abstract: str | None) -> str:
    abstract_xml = f"<Abstract><AbstractText>{abstract}</AbstractText></Abstract>" if abstract else ""
    return (
        f"<PubmedArticle><MedlineCitation><PMID>{pmid}</PMID><Article>"
        f"<Journal><Title>Journal of Tests</Title><JournalIssue><PubDate><Year>2020</Year></PubDate></JournalIssue>"
        f"</Journal><ArticleTitle>{title}</ArticleTitle>{abstract_xml}</Article></MedlineCitation></PubmedArticle>"
    )


def article_set(*items: str) -> str:
    return '<?xml version="1.0" encoding="UTF-8"?>\n<PubmedArticleSet>\n' + "\n".join(items) + "\n</PubmedArticleSet>\n"


BASELINE_XML = article_set(
    pubmed_article("11", "Metformin in diabetes.", "Metformin lowered glucose in patients with type 2 diabetes."),
    pubmed_article("12", "Aspirin after infarction.", "Aspirin reduced reinfarction in patients after a heart attack."),
    pubmed_article("13", "Warfarin and stroke.", "Warfarin prevented stroke in patients with atrial fibrillation."),
    pubmed_article("14", "A letter without an abstract.", None),
)
UPDATE_XML = article_set('<DeleteCitation><PMID Version="1">12</PMID></DeleteCitation>')
JSONL_LINES = (
    {"pmid": "21", "title": "Asthma steroids", "abstract": "Inhaled steroids helped patients with asthma."},
    {"pmid": "22", "title": "Flu vaccine", "abstract": "The vaccine protected older patients from influenza."},
    {"pmid": "23", "title": "No abstract here", "abstract": ""},
)
KEPT = {"11", "13", "21", "22"}


class InMemorySink:
    """The article store as the ArticleSink protocol describes it, in dicts (the database one is tested in webapp)."""

    def __init__(self) -> None:
        self.records: dict[str, ArticleRecord] = {}
        self.sources: dict[str, str] = {}
        self.embedded: set[str] = set()
        self.notices: list[Notice] = []
        self.save_calls = 0

    def save(self, records: Sequence[ArticleRecord], *, source: str) -> list[ArticleRecord]:
        self.save_calls += 1
        written = []
        for record in records:
            stored = self.records.get(record.pmid)
            if stored is not None and (stored.version > record.version or stored == record):
                continue
            self.records[record.pmid] = record
            self.sources[record.pmid] = source
            self.embedded.discard(record.pmid)
            written.append(record)
        return written

    def save_notices(self, notices: Sequence[Notice]) -> None:
        self.notices.extend(notices)

    def delete(self, pmids: Sequence[str]) -> None:
        for pmid in pmids:
            self.records.pop(pmid, None)
            self.embedded.discard(pmid)

    def pending_embedding(self, *, source: str | None, limit: int) -> list[ArticleRecord]:
        pending = [
            record
            for pmid, record in sorted(self.records.items())
            if pmid not in self.embedded and (source is None or self.sources[pmid] == source)
        ]
        return pending[:limit]

    def mark_embedded(self, pmids: Sequence[str]) -> None:
        self.embedded.update(pmids)

    def pending_count(self) -> int:
        return len(set(self.records) - self.embedded)


class StagesHeard:
    """An IngestProgress that writes down what it hears."""

    def __init__(self) -> None:
        self.started: dict[str, int] = {}
        self.advanced: dict[str, list[int]] = {}
        self.order: list[str] = []

    def stage_started(self, stage: str, total: int) -> None:
        self.started[stage] = total

    def stage_advanced(self, stage: str, count: int) -> None:
        self.advanced.setdefault(stage, []).append(count)
        self.order.append(stage)


class EmbedderThatDies:
    """The real embedder, killed (as a worker would be) after a number of calls."""

    def __init__(self, embedder: SentenceTransformerEmbedder, *, calls: int) -> None:
        self.embedder, self.calls_left = embedder, calls
        self.model_id, self.dimension = embedder.model_id, embedder.dimension
        self.max_tokens = embedder.max_tokens

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        return self.embedder.token_lengths(texts)

    def embed(self, texts: Sequence[str]) -> Vectors:
        if self.calls_left == 0:
            raise KeyboardInterrupt("worker killed")
        self.calls_left -= 1
        return self.embedder.embed(texts)


@dataclass
class Stores:
    sink: InMemorySink
    lexical: TantivyIndex
    vectors: QdrantEdgeIndex


@pytest.fixture(scope="module")
def embedder(minilm: SentenceTransformerEmbedder) -> SentenceTransformerEmbedder:
    return minilm


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[Stores]:
    stores = Stores(
        sink=InMemorySink(),
        lexical=TantivyIndex(tmp_path / "tantivy"),
        vectors=QdrantEdgeIndex(tmp_path / "qdrant", dimension=384),
    )
    yield stores
    stores.vectors.close()
    stores.lexical.close()


@pytest.fixture
def corpus(tmp_path: Path) -> list[Path]:
    folder = tmp_path / "corpus"
    folder.mkdir()
    baseline = folder / "baseline.xml"
    baseline.write_text(BASELINE_XML, encoding="utf-8")
    update = folder / "update.xml.gz"
    update.write_bytes(gzip.compress(UPDATE_XML.encode("utf-8")))
    jsonl = folder / "extra.jsonl"
    jsonl.write_text("".join(json.dumps(line) + "\n" for line in JSONL_LINES), encoding="utf-8")
    return [baseline, update, jsonl]


def ingest(paths: list[Path], stores: Stores, embedder: SentenceTransformerEmbedder, **options: Any) -> IngestReport:
    return ingest_paths(
        paths, sink=stores.sink, lexical=stores.lexical, vectors=stores.vectors, embedder=embedder, **options
    )


def lexical_pmids(stores: Stores) -> set[str]:
    return {hit.pmid for hit in stores.lexical.search(SHARED_WORD, limit=100)}


def vector_pmids(stores: Stores, embedder: SentenceTransformerEmbedder) -> set[str]:
    return {hit.pmid for hit in stores.vectors.search(embedder.embed([SHARED_WORD])[0], limit=100)}


def test_it_reports_what_it_read_stored_skipped_and_deleted(
    corpus: list[Path], stores: Stores, embedder: SentenceTransformerEmbedder
) -> None:
    report = ingest(corpus, stores, embedder)

    assert report.files == 3
    assert report.articles == 5  # 11, 12, 13 and 21, 22; 12 is deleted afterwards by the update file
    assert report.skipped_without_abstract == 2  # 14 in XML, 23 in JSONL
    assert report.deleted == 1


def test_it_times_every_stage(corpus: list[Path], stores: Stores, embedder: SentenceTransformerEmbedder) -> None:
    report = ingest(corpus, stores, embedder)

    assert set(report.seconds) == set(STAGES) == {"parse", "database", "lexical", "chunk", "embed", "vector"}
    assert all(seconds >= 0 for seconds in report.seconds.values())
    assert report.seconds["embed"] > 0
    assert report.seconds["lexical"] > 0
    assert report.rate("embed") == pytest.approx(report.embedded / report.seconds["embed"])
    assert report.rate("parse") == pytest.approx(report.articles / report.seconds["parse"])


def test_rate_of_a_stage_that_took_no_time_is_zero() -> None:
    assert IngestReport(articles=10).rate("parse") == 0.0


def test_sink_tantivy_and_qdrant_hold_the_same_pmids(
    corpus: list[Path], stores: Stores, embedder: SentenceTransformerEmbedder
) -> None:
    ingest(corpus, stores, embedder)

    assert set(stores.sink.records) == KEPT
    assert lexical_pmids(stores) == KEPT
    assert vector_pmids(stores, embedder) == KEPT
    assert stores.lexical.count() == len(KEPT)
    assert stores.vectors.count() == len(KEPT)


def test_stored_records_keep_their_metadata(
    corpus: list[Path], stores: Stores, embedder: SentenceTransformerEmbedder
) -> None:
    ingest(corpus, stores, embedder)

    record = stores.sink.records["13"]
    assert record.title == "Warfarin and stroke."
    assert record.abstract == "Warfarin prevented stroke in patients with atrial fibrillation."
    assert (record.journal, record.year) == ("Journal of Tests", 2020)
    assert stores.sink.records["21"].title == "Asthma steroids"


def test_ingested_articles_are_findable_by_topic_in_both_indexes(
    corpus: list[Path], stores: Stores, embedder: SentenceTransformerEmbedder
) -> None:
    ingest(corpus, stores, embedder)

    assert stores.lexical.search("warfarin atrial fibrillation", limit=5)[0].pmid == "13"
    assert stores.vectors.search(embedder.embed(["blood thinner to prevent stroke"])[0], limit=1)[0].pmid == "13"


def test_ingesting_the_same_files_again_is_idempotent(
    corpus: list[Path], stores: Stores, embedder: SentenceTransformerEmbedder
) -> None:
    first = ingest(corpus, stores, embedder)

    second = ingest(corpus, stores, embedder)

    assert (second.files, second.articles, second.skipped_without_abstract, second.deleted) == (
        first.files,
        first.articles,
        first.skipped_without_abstract,
        first.deleted,
    )
    # Only 12 is written again (the update file had deleted it; replaying the files replays that too); the other
    # articles are unchanged, so nothing else is re-indexed. Every file is stored before anything is embedded, so 12,
    # deleted again by the update file, is not embedded at all.
    assert second.written == 1
    assert second.embedded == 0
    assert set(stores.sink.records) == KEPT
    assert stores.lexical.count() == len(KEPT)
    assert stores.vectors.count() == len(KEPT)
    assert lexical_pmids(stores) == vector_pmids(stores, embedder) == KEPT


def test_a_run_killed_while_embedding_resumes_without_duplicates_or_gaps(
    corpus: list[Path], stores: Stores, embedder: SentenceTransformerEmbedder
) -> None:
    dying = EmbedderThatDies(embedder, calls=1)
    with pytest.raises(KeyboardInterrupt):
        ingest_paths(
            corpus, sink=stores.sink, lexical=stores.lexical, vectors=stores.vectors, embedder=dying, batch_size=2
        )
    # Every file was stored before embedding started; the first batch (11 and 13) made it, the rest did not.
    assert stores.sink.embedded == {"11", "13"}

    report = ingest(corpus, stores, embedder)

    assert report.written == 1  # only 12, which the baseline writes again and the update file deletes again
    assert report.embedded == 2  # 21 and 22, left over
    assert stores.sink.embedded == KEPT
    assert stores.vectors.count() == len(KEPT)
    assert vector_pmids(stores, embedder) == KEPT


def test_a_changed_article_is_re_embedded_and_an_older_version_is_ignored(
    tmp_path: Path, stores: Stores, embedder: SentenceTransformerEmbedder
) -> None:
    def write(name: str, title: str, abstract: str, version: int) -> Path:
        path = tmp_path / name
        row = {"pmid": "77", "title": title, "abstract": abstract}
        path.write_text(json.dumps(row) + "\n", encoding="utf-8")
        return path

    ingest([write("a.jsonl", "Zinc", "Zinc shortened colds in patients.", 1)], stores, embedder)
    changed = ingest(
        [write("b.jsonl", "Selenium", "Selenium helped patients with thyroid disease.", 1)], stores, embedder
    )

    assert (changed.written, changed.embedded) == (1, 1)
    assert stores.vectors.count() == 1
    assert stores.vectors.search(embedder.embed(["thyroid selenium"])[0], limit=1)[0].pmid == "77"
    assert stores.lexical.search("zinc", limit=5) == []

    older = ArticleRecord("77", "Old", "An older version.", version=0)
    assert stores.sink.save([older], source="c.jsonl") == []
    assert stores.sink.records["77"].title == "Selenium"


def test_a_long_abstract_is_stored_as_several_chunks_and_found_as_one_article(
    tmp_path: Path, stores: Stores, embedder: SentenceTransformerEmbedder
) -> None:
    sentences = " ".join(
        f"Patients in arm {number} received dose {number} of the study drug daily." for number in range(60)
    )
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps({"pmid": "88", "title": "Dosing", "abstract": sentences}) + "\n", encoding="utf-8")

    report = ingest([path], stores, embedder)

    assert report.chunks > 1
    assert stores.vectors.count() == report.chunks
    assert [hit.pmid for hit in stores.vectors.search(embedder.embed(["study drug dose"])[0], limit=5)] == ["88"]


def test_small_batches_store_the_same_articles_and_report_progress(
    corpus: list[Path], stores: Stores, embedder: SentenceTransformerEmbedder
) -> None:
    progress = StagesHeard()

    report = ingest(corpus, stores, embedder, batch_size=2, progress=progress)

    assert progress.advanced["store"] == [2, 1, 2]  # baseline: 11+12, then 13; the update holds none; JSONL: 21+22
    assert sum(progress.advanced["store"]) == report.articles == 5
    # Every file is stored before anything is embedded; then each stage hears of every article once, in batches.
    # 12 is stored from the baseline and deleted by the update file before embedding starts: 4 articles to embed.
    assert progress.started == {"chunk": 4, "embed": 4, "upsert": 4}
    assert progress.order.index("chunk") > max(i for i, stage in enumerate(progress.order) if stage == "store")
    for stage in ("chunk", "embed", "upsert"):
        assert progress.advanced[stage] == [2, 2]
    assert report.embedded == 4
    assert stores.sink.save_calls == 3
    assert set(stores.sink.records) == KEPT
    assert stores.vectors.count() == len(KEPT)


def test_a_deferred_ingest_stores_every_file_and_embeds_nothing(
    corpus: list[Path], stores: Stores, embedder: SentenceTransformerEmbedder
) -> None:
    progress = StagesHeard()

    report = ingest(corpus, stores, embedder, progress=progress, defer_embedding=True)

    assert report.articles == 5
    assert report.embedded == 0
    assert set(progress.advanced) == {"store"}
    assert stores.sink.pending_count() == len(KEPT)
    assert stores.vectors.count() == 0
    assert stores.lexical.count() == len(KEPT)


def test_a_pmid_repeated_in_one_file_is_stored_once_with_its_last_version(
    tmp_path: Path, stores: Stores, embedder: SentenceTransformerEmbedder
) -> None:
    path = tmp_path / "repeated.jsonl"
    lines = [
        {"pmid": "31", "title": "Old", "abstract": "Old text about patients and zinc."},
        {"pmid": "31", "title": "New", "abstract": "New text about patients and selenium."},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")

    ingest([path], stores, embedder)

    assert stores.sink.records["31"].title == "New"
    assert stores.lexical.count() == stores.vectors.count() == 1
    assert stores.lexical.search("zinc", limit=5) == []
    assert [hit.pmid for hit in stores.lexical.search("selenium", limit=5)] == ["31"]


def test_a_directory_is_ingested_file_by_file(
    corpus: list[Path], stores: Stores, embedder: SentenceTransformerEmbedder
) -> None:
    report = ingest([corpus[0].parent], stores, embedder)

    # Sorted order: baseline.xml, extra.jsonl, update.xml.gz; the deletion still comes after 12 was stored.
    assert report.files == 3
    assert set(stores.sink.records) == KEPT


@pytest.mark.parametrize("name", ["cut.xml.gz", "cut.jsonl.gz"])
def test_a_truncated_gzip_file_raises_corpus_format_error(
    tmp_path: Path, stores: Stores, embedder: SentenceTransformerEmbedder, name: str
) -> None:
    jsonl = "".join(json.dumps(line) + "\n" for line in JSONL_LINES)
    text = BASELINE_XML if name.startswith("cut.xml") else jsonl
    packed = gzip.compress(text.encode("utf-8"))
    path = tmp_path / name
    path.write_bytes(packed[: len(packed) // 2])

    with pytest.raises(CorpusFormatError, match=r"cut\.(xml|jsonl)\.gz.*(truncated|corrupt)"):
        ingest([path], stores, embedder)


def test_a_missing_path_fails_before_anything_is_stored(
    tmp_path: Path, corpus: list[Path], stores: Stores, embedder: SentenceTransformerEmbedder
) -> None:
    with pytest.raises(FileNotFoundError, match="does-not-exist"):
        ingest([corpus[0], tmp_path / "does-not-exist.xml"], stores, embedder)

    assert stores.sink.records == {}


# estimate_records


def test_estimate_counts_lines_in_jsonl(corpus: list[Path]) -> None:
    assert estimate_records(corpus[2]) == len(JSONL_LINES)


def test_estimate_counts_lines_in_gzipped_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "lines.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"pmid": "1"}\n{"pmid": "2"}\n'))

    assert estimate_records(path) == 2


def test_estimate_counts_citations_in_pubmed_xml(corpus: list[Path]) -> None:
    assert estimate_records(corpus[0]) == 4  # the citation without an abstract is still a record to read


def test_estimate_of_a_gzipped_file_holding_only_deletions_is_zero(corpus: list[Path]) -> None:
    assert estimate_records(corpus[1]) == 0


def test_estimate_counts_citations_in_the_pre_2017_medline_layout(tmp_path: Path) -> None:
    path = tmp_path / "medline.xml"
    citation = "<MedlineCitation><PMID>{}</PMID><Article><ArticleTitle>T.</ArticleTitle></Article></MedlineCitation>"
    path.write_text(
        f'<?xml version="1.0"?>\n<MedlineCitationSet>{citation.format(1)}{citation.format(2)}</MedlineCitationSet>\n'
    )

    assert estimate_records(path) == 2


def test_estimate_of_a_truncated_gzip_is_a_partial_count_not_an_error(tmp_path: Path) -> None:
    lines = "".join(json.dumps({"pmid": str(number), "abstract": "x" * 50}) + "\n" for number in range(500))
    packed = gzip.compress(lines.encode())
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(packed[: len(packed) // 2])

    assert 0 <= estimate_records(path) < 500
