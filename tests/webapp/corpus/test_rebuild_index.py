"""Rebuilding both indexes from the database into a new generation while the live one keeps answering."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command

from indexer.ingest import ingest_paths
from indexer.records import ArticleRecord
from webapp.corpus import engines
from webapp.corpus.models import Article
from webapp.corpus.services.articles import DatabaseArticleSink
from webapp.corpus.services.generations import INITIAL_GENERATION, active_generation
from webapp.corpus.services.rebuild import index_rebuild

pytestmark = [pytest.mark.model, pytest.mark.django_db]

CORPUS = "\n".join(
    [
        '{"pmid": "1", "title": "Metformin in diabetes", "abstract": "Metformin lowered glucose in adults."}',
        '{"pmid": "2", "title": "Warfarin and stroke", "abstract": "Warfarin prevented stroke in AF."}',
        '{"pmid": "3", "title": "Zinc and colds", "abstract": "Zinc lozenges shortened the common cold."}',
    ]
)


@pytest.fixture(autouse=True)
def _own_index(own_index: Path) -> Path:
    return own_index


@pytest.fixture
def ingested(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_text(CORPUS)
    ingest_paths(
        [path],
        sink=DatabaseArticleSink(),
        lexical=engines.lexical_index(),
        vectors=engines.vector_index(),
        embedder=engines.embedder(),
    )


def lexical_top(query: str) -> str:
    return engines.lexical_index().search(query, limit=1)[0].pmid


def dense_top(query: str) -> str:
    return engines.vector_index().search(engines.embedder().embed([query])[0], limit=1)[0].pmid


@pytest.mark.usefixtures("ingested")
def test_a_rebuild_switches_to_a_complete_new_generation(own_index: Path) -> None:
    assert active_generation() == INITIAL_GENERATION

    report = index_rebuild()

    assert report.previous == INITIAL_GENERATION
    assert active_generation() == report.generation != INITIAL_GENERATION
    assert (report.articles, report.chunks) == (3, 3)
    assert lexical_top("warfarin stroke") == "2"
    assert dense_top("blood thinner to prevent strokes") == "2"
    assert engines.lexical_index().count() == 3
    assert (own_index / f"tantivy-{report.generation}").is_dir()


@pytest.mark.usefixtures("ingested")
def test_questions_are_answered_from_the_live_generation_while_the_rebuild_runs() -> None:
    seen: list[tuple[str, str]] = []

    def during_rebuild(count: int) -> None:
        seen.append((active_generation(), lexical_top("zinc colds")))

    index_rebuild(batch_size=1, on_progress=during_rebuild)

    assert len(seen) >= 3
    assert set(seen) == {(INITIAL_GENERATION, "3")}


@pytest.mark.usefixtures("ingested")
def test_the_previous_generation_is_kept_for_rollback_and_older_ones_removed(own_index: Path) -> None:
    first = index_rebuild()
    second = index_rebuild()

    folders = {path.name for path in own_index.iterdir() if path.is_dir()}
    assert f"tantivy-{second.generation}" in folders
    assert f"tantivy-{first.generation}" in folders
    assert f"tantivy-{INITIAL_GENERATION}" not in folders
    assert f"qdrant_edge-{INITIAL_GENERATION}" not in folders


@pytest.mark.usefixtures("ingested")
def test_a_rebuild_picks_up_what_the_database_holds_now() -> None:
    Article.objects.filter(pmid="3").delete()

    index_rebuild()

    assert engines.lexical_index().count() == 2
    assert {hit.pmid for hit in engines.lexical_index().search("zinc colds", limit=5)} == set()


def test_ingest_demo_rebuilds_an_empty_index_from_articles_already_stored(tmp_path: Path) -> None:
    DatabaseArticleSink().save([ArticleRecord("9", "Aspirin", "Aspirin eased pain.")], source="old")

    call_command("ingest_demo")

    assert lexical_top("aspirin") == "9"
