"""Fixtures for the Django side: articles in the database and in the test session's own real indexes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_django.fixtures import Settings

from indexer.ingest import ingest_paths
from indexer.records import ArticleRecord
from webapp.corpus import engines
from webapp.corpus.services import DatabaseArticleSink

ARTICLES = [
    ArticleRecord(
        pmid="10000001",
        title="Metformin and lactic acidosis in type 2 diabetes.",
        abstract="We followed 5,000 patients taking metformin for two years. No cases of lactic acidosis occurred. "
        "HbA1c fell by 1.1 percentage points.",
        journal="Diabetes Care",
        year=2010,
    ),
    ArticleRecord(
        pmid="10000002",
        title="Everolimus inhibits mTORC1 signalling.",
        abstract="Everolimus binds FKBP12. The complex inhibits mTORC1 and blocks downstream signalling to S6K1. "
        "Cell growth slowed in renal carcinoma lines.",
        journal="Cancer Research",
        year=2012,
    ),
]


@pytest.fixture
def indexed_articles(tmp_path: Path, db: None) -> list[ArticleRecord]:
    """ARTICLES ingested the product's way: into the database, tantivy and the in-process Qdrant engine."""
    corpus = tmp_path / "articles.jsonl"
    corpus.write_text(
        "\n".join(
            json.dumps({"pmid": a.pmid, "title": a.title, "abstract": a.abstract, "journal": a.journal, "year": a.year})
            for a in ARTICLES
        )
    )
    ingest_paths(
        [corpus],
        sink=DatabaseArticleSink(),
        lexical=engines.lexical_index(),
        vectors=engines.vector_index(),
        embedder=engines.embedder(),
    )
    return ARTICLES


@pytest.fixture
def own_index(settings: Settings, tmp_path: Path) -> Iterator[Path]:
    """Engines over this test's own empty index folder (the session's shared index is left alone)."""
    engines.release_engines()
    settings.VERIMED_INDEX_DIR = tmp_path / "index"
    yield settings.VERIMED_INDEX_DIR
    engines.release_engines()
