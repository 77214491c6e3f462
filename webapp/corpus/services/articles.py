"""Writes to the article table, used by ingestion."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict

from django.db import connection, transaction

from indexer.records import ArticleRecord, Author, MeshHeading, Notice
from webapp.corpus.models import Article, ArticleCounts
from webapp.corpus.services.retractions import (
    retractions_forget,
    retractions_record_articles,
    retractions_record_notices,
)

_FIELDS = [
    "version",
    "title",
    "abstract",
    "journal",
    "journal_iso",
    "volume",
    "issue",
    "pages",
    "pub_date",
    "year",
    "authors",
    "author_details",
    "mesh",
    "publication_types",
    "language",
    "doi",
    "pmc",
    "source_file",
    "embedded",
]


def _row(record: ArticleRecord, source: str) -> Article:
    return Article(
        pmid=record.pmid,
        version=record.version,
        title=record.title,
        abstract=record.abstract,
        journal=record.journal[:512],
        journal_iso=record.journal_iso[:256],
        volume=record.volume[:64],
        issue=record.issue[:64],
        pages=record.pages[:64],
        pub_date=record.pub_date[:64],
        year=record.year,
        authors=list(record.author_names),
        author_details=[asdict(author) for author in record.authors],
        mesh=[asdict(heading) for heading in record.mesh],
        publication_types=list(record.publication_types),
        language=record.language[:16],
        doi=record.doi[:256],
        pmc=record.pmc[:32],
        source_file=source[:128],
        embedded=False,
    )


def _comparable(article: Article) -> str:
    # Through JSON, so that tuples in a new row compare equal to the lists a stored JSON field reads back as.
    return json.dumps([getattr(article, name) for name in _FIELDS if name not in ("source_file", "embedded")])


def article_upsert_batch(*, records: Sequence[ArticleRecord], source: str = "") -> list[ArticleRecord]:
    """Insert or replace articles by PMID in one statement; returns the records actually written.

    A stored newer version wins over an older one arriving later, and a record identical to the stored row is left
    alone, so re-ingesting a file rewrites nothing and queues nothing for re-embedding.
    """
    stored = {article.pmid: article for article in Article.objects.filter(pmid__in=[record.pmid for record in records])}
    written: list[ArticleRecord] = []
    rows: list[Article] = []
    for record in records:
        row = _row(record, source)
        previous = stored.get(record.pmid)
        if previous is not None and (previous.version > record.version or _comparable(previous) == _comparable(row)):
            continue
        written.append(record)
        rows.append(row)
    with transaction.atomic():
        Article.objects.bulk_create(rows, update_conflicts=True, unique_fields=["pmid"], update_fields=_FIELDS)
    return written


def article_delete_batch(*, pmids: Sequence[str]) -> int:
    deleted, _ = Article.objects.filter(pmid__in=list(pmids)).delete()
    return deleted


def article_counts() -> tuple[int, int]:
    """Articles stored, and those the vector index holds: one row the database keeps (ArticleCounts), counted again
    only when that row is missing."""
    row = ArticleCounts.objects.filter(pk=ArticleCounts.ROW).values_list("articles", "embedded").first()
    return row if row is not None else article_counts_recount()


def article_counts_recount() -> tuple[int, int]:
    """Count the articles and store the figures (the triggers keep them from there): when the row is missing, as
    after a database emptied table by table (a test run's flush, a TRUNCATE), or after a restore that loaded rows
    around the triggers. Two full counts: never on a question's path but once."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            # No article written between the counts and the store (SQLite's IMMEDIATE transaction holds writers off).
            with connection.cursor() as cursor:
                cursor.execute(f"LOCK TABLE {Article._meta.db_table} IN SHARE MODE")
        articles, embedded = Article.objects.count(), Article.objects.filter(embedded=True).count()
        ArticleCounts.objects.update_or_create(
            pk=ArticleCounts.ROW, defaults={"articles": articles, "embedded": embedded}
        )
    return articles, embedded


def article_record(article: Article) -> ArticleRecord:
    """A stored article as the record it was saved from (the embed step and a rebuild read these back).

    Its retraction and erratum entries are not on the row but in CorrectionLink, which the indexes never need.
    """
    return ArticleRecord(
        pmid=article.pmid,
        version=article.version,
        title=article.title,
        abstract=article.abstract,
        journal=article.journal,
        journal_iso=article.journal_iso,
        volume=article.volume,
        issue=article.issue,
        pages=article.pages,
        year=article.year,
        pub_date=article.pub_date,
        authors=tuple(
            Author(
                name=author["name"],
                collective=author.get("collective", False),
                affiliations=tuple(author.get("affiliations", ())),
                orcid=author.get("orcid", ""),
            )
            for author in article.author_details
        ),
        mesh=tuple(
            MeshHeading(
                descriptor=heading["descriptor"],
                major_topic=heading.get("major_topic", False),
                qualifiers=tuple(heading.get("qualifiers", ())),
            )
            for heading in article.mesh
        ),
        publication_types=tuple(article.publication_types),
        language=article.language,
        doi=article.doi,
        pmc=article.pmc,
    )


class DatabaseArticleSink:
    """The indexer's ArticleSink, backed by the article table."""

    def save(self, records: Sequence[ArticleRecord], *, source: str) -> list[ArticleRecord]:
        written = article_upsert_batch(records=records, source=source)
        # Every record, not only those written: a row stored before retractions were read has its links made here.
        retractions_record_articles(records=records)
        return written

    def save_notices(self, notices: Sequence[Notice]) -> None:
        """Notices read without an abstract: not articles, but they mark the papers they point at."""
        retractions_record_notices(notices=notices)

    def delete(self, pmids: Sequence[str]) -> None:
        article_delete_batch(pmids=pmids)
        retractions_forget(pmids=pmids)

    def pending_embedding(self, *, source: str | None, limit: int) -> list[ArticleRecord]:
        pending = Article.objects.filter(embedded=False)
        if source is not None:
            pending = pending.filter(source_file=source[:128])
        return [article_record(article) for article in pending.order_by("pmid")[:limit]]

    def mark_embedded(self, pmids: Sequence[str]) -> None:
        Article.objects.filter(pmid__in=list(pmids)).update(embedded=True)

    def pending_count(self) -> int:
        return Article.objects.filter(embedded=False).count()

    def records(self, pmids: Sequence[str]) -> list[ArticleRecord]:
        """These articles as stored now (those no longer stored are left out), in PMID order."""
        return [article_record(article) for article in Article.objects.filter(pmid__in=list(pmids)).order_by("pmid")]
