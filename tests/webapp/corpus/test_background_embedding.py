"""Embedding in the background: `ingest --defer-embedding` leaves articles pending (searchable by their words at
once), the background embedder's batches go into the vector index through the worker's task, and the share of the
corpus the semantic leg covers is shown and recorded. Through the product's path: the database, tantivy, the
in-process Qdrant engine and the real MiniLM embedder."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from pytest_django.fixtures import Settings

from indexer.base import VectorOptions
from indexer.ingest import IngestReport
from indexer.registry import build_vector_index
from webapp.corpus import engines
from webapp.corpus.models import Article, IndexJob, PubmedFile
from webapp.corpus.services.background_embedding import (
    apply_waiting_batches,
    chunker_for,
    embed_next_batch,
    inbox_folder,
    last_progress,
    report_progress,
    semantic_coverage,
)
from webapp.corpus.services.generations import active_generation
from webapp.corpus.services.indexing import pubmed_file_background_wait
from webapp.corpus.tasks import vectors_apply_waiting_task
from webapp.qa.services import admission, retrieve

pytestmark = [pytest.mark.model, pytest.mark.django_db]

ARTICLES = [
    {"pmid": "501", "title": "Zinc and colds", "abstract": "Zinc lozenges shortened the common cold in adults."},
    {"pmid": "502", "title": "Statins", "abstract": "Statins lowered LDL cholesterol by a third over five years."},
    {"pmid": "503", "title": "Metformin", "abstract": "Metformin lowered HbA1c in adults with type 2 diabetes."},
]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(article) + "\n" for article in ARTICLES), encoding="utf-8")
    return path


def _deferred_ingest(corpus: Path) -> str:
    out = io.StringIO()
    call_command("ingest", "--no-progress", "--defer-embedding", str(corpus), stdout=out)
    return out.getvalue()


def _embed_one_batch(limit: int = 10) -> int:
    embedder = engines.embedder()
    return embed_next_batch(embedder=embedder, chunker=chunker_for(embedder), limit=limit, report=IngestReport())


def _dense_pmids(text: str) -> list[str]:
    return [hit.pmid for hit in engines.vector_index().search(engines.embedder().embed([text])[0], limit=5)]


def test_a_deferred_ingest_stores_and_indexes_words_but_leaves_vectors_to_the_background(
    own_index: Path, corpus: Path
) -> None:
    printed = _deferred_ingest(corpus)

    assert "3 articles wait to be embedded" in printed
    assert Article.objects.filter(embedded=False).count() == 3
    assert engines.lexical_index().count() == 3
    assert engines.vector_index().count() == 0
    coverage = semantic_coverage()
    assert (coverage.articles, coverage.embedded, coverage.share) == (3, 0, 0.0)


def test_batches_from_the_embedder_reach_the_index_through_the_workers_task(own_index: Path, corpus: Path) -> None:
    _deferred_ingest(corpus)

    assert _embed_one_batch(limit=2) == 2
    assert _embed_one_batch(limit=2) == 1  # the two already in a waiting batch are not embedded twice
    assert _embed_one_batch(limit=2) == 0
    assert Article.objects.filter(embedded=True).count() == 0  # nothing is in the index before the worker writes it

    assert vectors_apply_waiting_task.apply().get() == 3
    assert vectors_apply_waiting_task.apply().get() == 0  # a second task finds nothing left

    assert Article.objects.filter(embedded=False).count() == 0
    assert semantic_coverage().complete
    assert list(inbox_folder().iterdir()) == []
    assert _dense_pmids("cholesterol lowering drugs")[0] == "502"


def test_an_article_revised_after_it_was_embedded_is_embedded_again(own_index: Path, corpus: Path) -> None:
    _deferred_ingest(corpus)
    _embed_one_batch()
    revised = corpus.with_name("revised.jsonl")
    revised.write_text(
        json.dumps({**ARTICLES[0], "abstract": "Zinc lozenges did not change how long colds lasted."}) + "\n",
        encoding="utf-8",
    )
    _deferred_ingest(revised)

    assert apply_waiting_batches(vectors=engines.vector_index(), embedder=engines.embedder()) == 2
    assert list(Article.objects.filter(embedded=False).values_list("pmid", flat=True)) == ["501"]

    assert _embed_one_batch() == 1
    assert apply_waiting_batches(vectors=engines.vector_index(), embedder=engines.embedder()) == 1
    assert semantic_coverage().complete


def test_an_unreadable_batch_is_discarded_and_its_articles_embedded_again(own_index: Path, corpus: Path) -> None:
    _deferred_ingest(corpus)
    _embed_one_batch()
    [batch] = list(inbox_folder().iterdir())
    batch.write_bytes(batch.read_bytes()[:100])  # a disk that filled up, a file cut short

    assert apply_waiting_batches(vectors=engines.vector_index(), embedder=engines.embedder()) == 0
    assert list(inbox_folder().iterdir()) == []
    assert Article.objects.filter(embedded=False).count() == 3

    assert _embed_one_batch() == 3
    assert apply_waiting_batches(vectors=engines.vector_index(), embedder=engines.embedder()) == 3


def test_embed_pending_embeds_into_a_free_index_and_refuses_one_another_process_holds(
    own_index: Path, corpus: Path
) -> None:
    _deferred_ingest(corpus)
    engines.release_engines()  # the index is free, as with the stack stopped
    holder = build_vector_index(
        VectorOptions(
            backend="qdrant_edge",
            dimension=engines.embedder_dimension(),
            folder=own_index / f"qdrant_edge-{active_generation()}",
        )
    )
    holder.count()  # opens the shard and holds its lock, as a running worker does
    try:
        with pytest.raises(CommandError, match=r"held by another process.*background embedder"):
            call_command("embed_pending", "--no-progress", stdout=io.StringIO())
    finally:
        holder.close()
        engines.release_engines()

    out = io.StringIO()
    call_command("embed_pending", "--no-progress", stdout=out)

    assert "embedded 3 articles into 3 chunks" in out.getvalue()
    assert semantic_coverage().complete
    assert _dense_pmids("type 2 diabetes glucose control")[0] == "503"


def test_the_embedders_report_gives_an_eta_and_goes_stale(own_index: Path, corpus: Path) -> None:
    _deferred_ingest(corpus)
    _embed_one_batch(limit=1)

    progress = report_progress(state="embedding", rate=0.5)

    assert (progress.articles, progress.embedded, progress.waiting, progress.remaining) == (3, 0, 1, 2)
    assert progress.eta_seconds == 4.0
    assert last_progress(stale_after_seconds=60) == progress
    time.sleep(0.05)
    assert last_progress(stale_after_seconds=0.01) is None


def test_the_status_page_shows_the_semantic_coverage_and_the_embedders_state(
    own_index: Path, corpus: Path, site_admin_client: Client
) -> None:
    client = site_admin_client
    _deferred_ingest(corpus)
    _embed_one_batch(limit=1)
    apply_waiting_batches(vectors=engines.vector_index(), embedder=engines.embedder())

    page = client.get("/index/").content.decode()
    assert 'id="semantic-coverage">33%' in page
    assert "the semantic leg covers 1 of 3" in page
    assert "The background embedder is not running" in page

    report_progress(state="embedding", rate=0.02)
    page = client.get("/index/").content.decode()
    assert "Background embedder: embedding" in page
    assert "about 2 min left" in page  # 2 articles at 0.02 a second

    _embed_one_batch()
    apply_waiting_batches(vectors=engines.vector_index(), embedder=engines.embedder())
    page = client.get("/index/").content.decode()
    assert 'id="semantic-coverage">100%' in page
    assert "search is hybrid across the whole corpus" in page


def test_the_embedding_inbox_lives_with_the_index(settings: Settings, own_index: Path) -> None:
    assert inbox_folder() == own_index / "embedding-inbox"


def test_an_index_jobs_embed_step_waits_for_the_background_embedder_only_while_it_has_work(
    settings: Settings, own_index: Path, corpus: Path
) -> None:
    job = IndexJob.objects.create(kind=IndexJob.Kind.FILES)
    stored = PubmedFile.objects.create(
        job=job, name=corpus.name, source_path=str(corpus), status=PubmedFile.Status.STORED
    )
    _deferred_ingest(corpus)

    settings.VERIMED = settings.VERIMED.replace(VERIMED_BACKGROUND_EMBEDDING=False)
    assert pubmed_file_background_wait(file_id=stored.pk) == 0  # the embed step embeds the file itself

    settings.VERIMED = settings.VERIMED.replace(VERIMED_BACKGROUND_EMBEDDING=True)
    assert pubmed_file_background_wait(file_id=stored.pk) == 3
    _embed_one_batch(limit=2)
    apply_waiting_batches(vectors=engines.vector_index(), embedder=engines.embedder())
    assert pubmed_file_background_wait(file_id=stored.pk) == 1

    IndexJob.objects.filter(pk=job.pk).update(cancel_requested=True)
    assert pubmed_file_background_wait(file_id=stored.pk) == 0  # the step runs and marks the file cancelled


def test_a_question_asked_before_embedding_finishes_is_answered_from_both_legs_and_says_how_much_was_covered(
    own_index: Path, corpus: Path, site_admin_client: Client
) -> None:
    _deferred_ingest(corpus)
    _embed_one_batch(limit=1)  # only 501 reaches the vector index
    apply_waiting_batches(vectors=engines.vector_index(), embedder=engines.embedder())
    question = admission.question_create(text="Does metformin lower HbA1c in type 2 diabetes?", enqueue=False)

    retrieve.question_retrieve(question_id=question.pk)

    question.refresh_from_db()
    retrieved = list(question.retrieved.order_by("rank"))
    assert retrieved[0].pmid == "503"  # not embedded yet: the lexical leg found it
    assert retrieved[0].lexical_score > 0
    assert retrieved[0].semantic_score == 0
    assert question.semantic_coverage == pytest.approx(1 / 3)
    payload = site_admin_client.get(f"/questions/{question.pk}.json").json()
    assert payload["semantic_coverage"] == pytest.approx(1 / 3)
