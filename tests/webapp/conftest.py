"""Fixtures for the Django side: articles in the database and in the test session's own real indexes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from pytest_django.fixtures import Settings

from indexer.ingest import ingest_paths
from indexer.records import ArticleRecord
from webapp.accounts.roles import ADMIN, RESEARCHER, REVIEWER, ROLES
from webapp.corpus import engines
from webapp.corpus.services.articles import DatabaseArticleSink

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
    settings.VERIMED = settings.VERIMED.replace(VERIMED_INDEX_DIR=tmp_path / "index")
    yield settings.VERIMED.paths.index_dir
    engines.release_engines()


@pytest.fixture
def role_users(db: None) -> dict[str, User]:
    """One person per role, made the way `manage.py user_create` makes them."""
    made: dict[str, User] = {}
    for role in ROLES:
        call_command(
            "user_create", f"{role}-user", "--role", role, "--password", "a-long-test-password", stdout=StringIO()
        )
        made[role] = User.objects.get(username=f"{role}-user")
    return made


def _signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def researcher_client(role_users: dict[str, User]) -> Client:
    return _signed_in(role_users[RESEARCHER])


@pytest.fixture
def reviewer_client(role_users: dict[str, User]) -> Client:
    return _signed_in(role_users[REVIEWER])


@pytest.fixture
def site_admin_client(role_users: dict[str, User]) -> Client:
    return _signed_in(role_users[ADMIN])
