"""Writes to the article table, used by ingestion."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

from django.db import transaction

from indexer.records import ArticleRecord
from webapp.corpus.models import Article

_FIELDS = ["title", "abstract", "journal", "year", "authors", "mesh"]


def article_upsert_batch(*, records: Sequence[ArticleRecord]) -> None:
    """Insert or replace articles by PMID in one statement: re-ingesting a file never duplicates a row."""
    rows = [
        Article(
            pmid=record.pmid,
            title=record.title,
            abstract=record.abstract,
            journal=record.journal[:512],
            year=record.year,
            authors=list(record.authors),
            mesh=[asdict(heading) for heading in record.mesh],
        )
        for record in records
    ]
    with transaction.atomic():
        Article.objects.bulk_create(rows, update_conflicts=True, unique_fields=["pmid"], update_fields=_FIELDS)


def article_delete_batch(*, pmids: Sequence[str]) -> int:
    deleted, _ = Article.objects.filter(pmid__in=list(pmids)).delete()
    return deleted


class DatabaseArticleSink:
    """The indexer's ArticleSink, backed by these services."""

    def save(self, records: Sequence[ArticleRecord]) -> None:
        article_upsert_batch(records=records)

    def delete(self, pmids: Sequence[str]) -> None:
        article_delete_batch(pmids=pmids)
