"""The article table as ingestion's sink: versions, unchanged records, the embed queue and every PubMed field."""

from __future__ import annotations

import pytest

from indexer.records import ArticleRecord, Author, MeshHeading
from webapp.corpus.models import Article
from webapp.corpus.services.articles import DatabaseArticleSink, article_record

FULL = ArticleRecord(
    pmid="555",
    version=2,
    title="Zinc and colds",
    abstract="BACKGROUND: Colds are common. RESULTS: Zinc shortened them.",
    journal="The Lancet",
    journal_iso="Lancet",
    volume="12",
    issue="3",
    pages="100-9",
    pub_date="1998 Dec-1999 Jan",
    year=1998,
    authors=(
        Author("Smith J", affiliations=("Dept of Medicine, Oxford",), orcid="0000-0002-1825-0097"),
        Author("COLD Study Group", collective=True),
    ),
    mesh=(MeshHeading("Zinc", major_topic=True, qualifiers=("therapeutic use",)),),
    publication_types=("Journal Article", "Randomized Controlled Trial"),
    language="eng",
    doi="10.1000/xyz",
    pmc="PMC12345",
)

pytestmark = pytest.mark.django_db


def test_every_field_survives_the_round_trip_through_the_table() -> None:
    sink = DatabaseArticleSink()

    assert sink.save([FULL], source="pubmed26n0001.xml.gz") == [FULL]

    row = Article.objects.get(pmid="555")
    assert article_record(row) == FULL
    assert row.authors == ["Smith J", "COLD Study Group"]
    assert (row.source_file, row.embedded) == ("pubmed26n0001.xml.gz", False)


def test_an_identical_record_is_not_written_again() -> None:
    sink = DatabaseArticleSink()
    sink.save([FULL], source="a")
    sink.mark_embedded(["555"])

    assert sink.save([FULL], source="b") == []
    row = Article.objects.get(pmid="555")
    assert (row.source_file, row.embedded) == ("a", True)  # nothing queued for re-embedding


def test_a_changed_record_replaces_the_row_and_is_queued_for_embedding() -> None:
    sink = DatabaseArticleSink()
    sink.save([FULL], source="a")
    sink.mark_embedded(["555"])
    changed = ArticleRecord("555", "Zinc and colds, corrected", FULL.abstract, version=2)

    assert sink.save([changed], source="b") == [changed]
    row = Article.objects.get(pmid="555")
    assert (row.title, row.source_file, row.embedded) == ("Zinc and colds, corrected", "b", False)
    assert [record.pmid for record in sink.pending_embedding(source="b", limit=10)] == ["555"]
    assert sink.pending_embedding(source="a", limit=10) == []


def test_an_older_version_never_replaces_a_newer_one() -> None:
    sink = DatabaseArticleSink()
    sink.save([FULL], source="a")

    assert sink.save([ArticleRecord("555", "Old", "Old abstract.", version=1)], source="b") == []
    assert Article.objects.get(pmid="555").title == "Zinc and colds"


def test_the_embed_queue_is_in_pmid_order_and_shrinks_as_articles_are_marked() -> None:
    sink = DatabaseArticleSink()
    sink.save([ArticleRecord(str(pmid), "T", "A.") for pmid in (30, 10, 20)], source="f")

    assert [record.pmid for record in sink.pending_embedding(source=None, limit=2)] == ["10", "20"]
    sink.mark_embedded(["10", "20"])
    assert [record.pmid for record in sink.pending_embedding(source="f", limit=10)] == ["30"]


def test_deleting_removes_the_rows() -> None:
    sink = DatabaseArticleSink()
    sink.save([FULL], source="a")

    sink.delete(["555", "unknown"])

    assert not Article.objects.exists()
