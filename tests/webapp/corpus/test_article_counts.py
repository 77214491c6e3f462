"""The semantic coverage line's figures (articles stored, articles in the vector index) are kept by the database as
articles are written, so every question reads them in one small query instead of counting the article table (two
full scans per question on PostgreSQL at PubMed's size). The figures stay those a count would give after ingesting,
revising, embedding and deleting, through the sink ingestion and the embedding steps write with."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from indexer.base import FusedHit
from indexer.records import ArticleRecord
from webapp.corpus.models import Article, ArticleCounts
from webapp.corpus.services.articles import DatabaseArticleSink
from webapp.corpus.services.background_embedding import semantic_coverage
from webapp.qa.pipeline import PipelineSettings
from webapp.qa.services import admission, retrieve
from webapp.qa.source_screening import FoundSources

pytestmark = pytest.mark.django_db


def _record(pmid: str, abstract: str = "Zinc lozenges shortened colds.", version: int = 1) -> ArticleRecord:
    return ArticleRecord(pmid=pmid, title=f"Article {pmid}", abstract=abstract, version=version)


def _figures() -> tuple[int, int]:
    coverage = semantic_coverage()
    return coverage.articles, coverage.embedded


def _counted() -> tuple[int, int]:
    return Article.objects.count(), Article.objects.filter(embedded=True).count()


def _counts_over_articles(queries: CaptureQueriesContext) -> list[str]:
    # `"corpus_article"` with its closing quote: the figures' own table, corpus_articlecounts, is not the article table.
    return [
        query["sql"]
        for query in queries.captured_queries
        if "COUNT(" in query["sql"].upper() and '"corpus_article"' in query["sql"]
    ]


def test_the_figures_follow_ingesting_revising_embedding_and_deleting() -> None:
    sink = DatabaseArticleSink()

    sink.save([_record("1"), _record("2"), _record("3")], source="a.xml")
    assert _figures() == (3, 0)

    sink.mark_embedded(["1", "2"])
    assert _figures() == (3, 2)
    sink.mark_embedded(["1"])  # marked again (a redelivered batch): no change
    assert _figures() == (3, 2)

    sink.save([_record("2", abstract="Zinc lozenges did not shorten colds.")], source="b.xml")  # revised: pending
    assert _figures() == (3, 1)
    sink.save([_record("1")], source="a.xml")  # the same record again: nothing written
    sink.save([_record("3", version=1)], source="c.xml")
    assert _figures() == (3, 1)

    sink.save([_record("4"), _record("5")], source="c.xml")
    sink.mark_embedded(["2", "4"])
    assert _figures() == (5, 3)

    sink.delete(["1", "3", "404"])  # one embedded, one pending, one never stored
    assert _figures() == (3, 2) == _counted()

    Article.objects.filter(pmid="2").delete()  # as the admin's delete does
    Article.objects.create(pmid="6", title="By hand", abstract="Added in the admin.", embedded=True)
    assert _figures() == (3, 2) == _counted()


def test_a_read_is_one_small_query_that_counts_no_articles() -> None:
    DatabaseArticleSink().save([_record("1"), _record("2")], source="a.xml")
    semantic_coverage()

    with CaptureQueriesContext(connection) as queries:
        assert _figures() == (2, 0)

    assert len(queries.captured_queries) == 1
    assert _counts_over_articles(queries) == []


def test_figures_lost_with_a_flushed_table_are_counted_again_once() -> None:
    """A database emptied table by table (a test run's flush, a TRUNCATE) may lose the figures' row: the next read
    counts once and stores them, and the database keeps them from there."""
    DatabaseArticleSink().save([_record("1"), _record("2")], source="a.xml")
    ArticleCounts.objects.all().delete()
    DatabaseArticleSink().save([_record("3")], source="a.xml")

    assert _figures() == (3, 0)
    DatabaseArticleSink().mark_embedded(["3"])
    with CaptureQueriesContext(connection) as queries:
        assert _figures() == (3, 1)
    assert _counts_over_articles(queries) == []


class _Search:
    """The retrieve stage's search, answered from the stored articles (its ranking is tested in tests/webapp/qa)."""

    def __call__(self, *, query: str, pipeline: PipelineSettings, owner_id: int | None = None) -> FoundSources:
        pmids = Article.objects.order_by("pmid").values_list("pmid", flat=True)
        hits = [FusedHit(pmid, 1 / rank, 1.0, 0.0, None, None) for rank, pmid in enumerate(pmids, start=1)]
        return FoundSources(hits=hits, closest=None)


def test_a_questions_retrieval_and_page_show_the_coverage_without_counting_the_articles(
    monkeypatch: pytest.MonkeyPatch, site_admin_client: Client
) -> None:
    monkeypatch.setattr(retrieve, "found_sources", _Search())
    sink = DatabaseArticleSink()
    sink.save([_record("1"), _record("2"), _record("3")], source="a.xml")
    sink.mark_embedded(["1", "2"])
    question = admission.question_create(text="Do zinc lozenges shorten colds?", enqueue=False)

    with CaptureQueriesContext(connection) as queries:
        retrieve.question_retrieve(question_id=question.pk)

    assert _counts_over_articles(queries) == []
    question.refresh_from_db()
    assert question.semantic_coverage == pytest.approx(2 / 3)

    with CaptureQueriesContext(connection) as queries:
        payload = site_admin_client.get(f"/questions/{question.pk}.json").json()
    assert _counts_over_articles(queries) == []
    assert payload["semantic_coverage"] == pytest.approx(2 / 3)

    sink.mark_embedded(["3"])
    later = admission.question_create(text="Do zinc lozenges shorten colds in children?", enqueue=False)
    retrieve.question_retrieve(question_id=later.pk)
    assert Article.objects.filter(embedded=False).count() == 0
    later.refresh_from_db()
    assert later.semantic_coverage == 1.0
