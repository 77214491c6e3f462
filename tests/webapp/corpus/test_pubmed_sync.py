"""`pubmed_sync` end to end against a real local HTTP server serving real PubMed excerpts under NCBI's names.

The Celery tasks run eagerly in the test process, through the real engines (SQLite, tantivy, qdrant-edge, MiniLM).
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from pytest_django.fixtures import Settings

from indexer.base import SearchFilters
from tests.ncbi_server import BASELINE, UPDATES, NcbiTestServer, excerpt_bytes, serve_ncbi
from webapp.celery import app
from webapp.corpus import engines
from webapp.corpus.models import Article, IndexJob, PubmedFile

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model

# Two small real baseline excerpts: 47 and 12 citations (pmparser's test files), under 2026 names.
BASELINE_FILES = {
    "pubmed26n0001.xml.gz": "pmparser/inst_extdata_pubmed20n0000.xml.gz",
    "pubmed26n0002.xml.gz": "pmparser/tests_testthat_data_testfiles_baseline_pubmed20n1015.xml.gz",
}
DELETED, REVISED = "31839728", "31839729"  # both in pubmed26n0002
UPDATE_XML = f"""<?xml version="1.0" encoding="UTF-8"?>
<PubmedArticleSet>
<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM"><PMID Version="2">{REVISED}</PMID><Article>
<Journal><Title>Journal of Revisions</Title><JournalIssue><PubDate><Year>2020</Year></PubDate></JournalIssue></Journal>
<ArticleTitle>Revised title about zinc supplementation.</ArticleTitle>
<Abstract><AbstractText>Zinc supplementation shortened the common cold in adults.</AbstractText></Abstract>
</Article></MedlineCitation></PubmedArticle>
<DeleteCitation><PMID Version="1">{DELETED}</PMID></DeleteCitation>
</PubmedArticleSet>
"""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[NcbiTestServer]:
    with serve_ncbi(tmp_path / "site") as running:
        for name, relative in BASELINE_FILES.items():
            running.publish(BASELINE, name, excerpt_bytes(relative))
        yield running


@pytest.fixture(autouse=True)
def eager_tasks(settings: Settings, tmp_path: Path, own_index: Path) -> Iterator[None]:
    """Tasks run in the test process, against engines of this test's own (empty) index folder."""
    settings.VERIMED = settings.VERIMED.replace(VERIMED_PUBMED_DIR=tmp_path / "downloads")
    settings.VERIMED = settings.VERIMED.replace(VERIMED_PUBMED_DOWNLOAD_RETRIES=2)
    settings.VERIMED = settings.VERIMED.replace(VERIMED_PUBMED_RETRY_BACKOFF_SECONDS=0.01)
    previous = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager, app.conf.task_eager_propagates = True, False
    yield
    app.conf.task_always_eager, app.conf.task_eager_propagates = previous


def sync(server: NcbiTestServer, *args: str, which: str = "--baseline") -> None:
    directory = BASELINE if which == "--baseline" else UPDATES
    call_command("pubmed_sync", which, "--base-url", server.url(directory), *args)


def searchable(query: str, **filters: object) -> set[str]:
    lexical = {hit.pmid for hit in engines.lexical_index().search(query, limit=500, filters=SearchFilters(**filters))}  # type: ignore[arg-type]
    vector = engines.embedder().embed([query])[0]
    dense = {hit.pmid for hit in engines.vector_index().search(vector, limit=500, filters=SearchFilters(**filters))}  # type: ignore[arg-type]
    return lexical | dense


@pytest.mark.django_db
def test_a_baseline_sync_downloads_checks_and_indexes_every_file(server: NcbiTestServer, settings: Settings) -> None:
    sync(server)

    job = IndexJob.objects.get()
    assert (job.kind, job.status, job.files_total, job.files_done, job.files_failed) == ("baseline", "done", 2, 2, 0)
    assert job.finished_at is not None
    files = list(PubmedFile.objects.order_by("name"))
    assert [(item.name, item.status) for item in files] == [(name, "indexed") for name in sorted(BASELINE_FILES)]
    assert all(len(item.md5) == 32 for item in files)
    stored = Article.objects.count()
    assert stored == sum(item.articles for item in files) == job.articles > 40
    assert not Article.objects.filter(embedded=False).exists()
    assert engines.lexical_index().count() == stored
    assert engines.vector_index().count() >= stored  # one point per chunk, at least one chunk per article
    assert REVISED in searchable("pharmacy", year_from=2019) | searchable("patients")
    # Downloaded files are removed once indexed; their md5 in the table is what a re-run checks.
    assert not any((settings.VERIMED.paths.pubmed_dir / item.name).exists() for item in files)


@pytest.mark.django_db
def test_a_second_sync_skips_files_indexed_with_the_same_md5(server: NcbiTestServer) -> None:
    sync(server)
    seen = len(server.requests)

    sync(server)

    assert IndexJob.objects.count() == 1  # nothing left to do: no new job
    downloads = [request for request in server.requests[seen:] if request.path.endswith(".xml.gz")]
    assert downloads == []


@pytest.mark.django_db
def test_max_files_processes_the_first_files_still_to_do(server: NcbiTestServer) -> None:
    sync(server, "--max-files", "1")
    sync(server, "--max-files", "1")

    jobs = list(IndexJob.objects.order_by("pk"))
    assert [job.files_total for job in jobs] == [1, 1]
    assert [item.job_id for item in PubmedFile.objects.order_by("name")] == [jobs[0].pk, jobs[1].pk]


@pytest.mark.django_db
def test_a_corrupted_file_fails_its_job_with_the_reason_and_the_rest_is_indexed(server: NcbiTestServer) -> None:
    server.corrupt("pubmed26n0002.xml.gz")

    with pytest.raises(CommandError, match="md5"):
        sync(server)

    job = IndexJob.objects.get()
    assert (job.status, job.files_done, job.files_failed) == ("failed", 1, 1)
    failed = PubmedFile.objects.get(name="pubmed26n0002.xml.gz")
    assert failed.status == "failed"
    assert "md5" in failed.error
    assert PubmedFile.objects.get(name="pubmed26n0001.xml.gz").status == "indexed"
    assert not Article.objects.filter(source_file="pubmed26n0002.xml.gz").exists()


@pytest.mark.django_db
def test_a_failed_file_is_finished_by_the_next_run_without_duplicates(server: NcbiTestServer) -> None:
    server.corrupt("pubmed26n0002.xml.gz", count=2)  # both attempts of the first run
    with pytest.raises(CommandError):
        sync(server)

    sync(server)

    assert PubmedFile.objects.filter(status="indexed").count() == 2
    assert IndexJob.objects.order_by("-pk").first().status == "done"  # type: ignore[union-attr]
    stored = Article.objects.count()
    assert engines.lexical_index().count() == stored
    assert engines.vector_index().count() >= stored  # one point per chunk, at least one chunk per article
    assert not Article.objects.filter(embedded=False).exists()


@pytest.mark.django_db
def test_a_truncated_transfer_resumes_with_a_range_request(server: NcbiTestServer) -> None:
    server.truncate_next("pubmed26n0001.xml.gz", after_bytes=4000)

    sync(server)

    ranges = server.ranges_for("pubmed26n0001.xml.gz")
    assert ranges[0] is None
    assert ranges[1] == "bytes=4000-"
    assert IndexJob.objects.get().status == "done"


@pytest.mark.django_db
def test_an_update_file_revises_and_deletes_citations_everywhere(server: NcbiTestServer) -> None:
    sync(server)
    assert Article.objects.filter(pmid=DELETED).exists()
    server.publish(UPDATES, "pubmed26n1336.xml.gz", gzip.compress(UPDATE_XML.encode()))

    sync(server, which="--updates")

    job = IndexJob.objects.get(kind="updates")
    assert (job.status, job.deleted) == ("done", 1)
    assert not Article.objects.filter(pmid=DELETED).exists()
    revised = Article.objects.get(pmid=REVISED)
    assert (revised.version, revised.title) == (2, "Revised title about zinc supplementation.")
    assert DELETED not in searchable("the")
    lexical_hits = engines.lexical_index().search("zinc supplementation common cold", limit=3)
    assert lexical_hits[0].pmid == REVISED
    vector = engines.embedder().embed(["zinc for colds"])[0]
    assert engines.vector_index().search(vector, limit=1)[0].pmid == REVISED


@pytest.mark.django_db
def test_an_unreachable_listing_is_a_clear_command_error(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="cannot list"):
        call_command("pubmed_sync", "--baseline", "--base-url", "http://127.0.0.1:9/pubmed/baseline/")


@pytest.mark.django_db
def test_the_listing_and_its_sidecars_are_retried_as_the_download_settings_say(server: NcbiTestServer) -> None:
    # eager_tasks sets VERIMED_PUBMED_DOWNLOAD_RETRIES=2: the listing and the sidecars, not only the downloads,
    # give up after that many failed attempts (they used to try three times and wait seconds between, whatever it said).
    server.fail_next("baseline", count=2)  # a third attempt would have been answered
    with pytest.raises(CommandError, match="cannot list"):
        sync(server)
    assert len(server.requests_for("baseline")) == 2

    server.fail_next("pubmed26n0001.xml.gz.md5", count=1)
    sync(server, "--max-files", "1")
    assert len(server.requests_for("pubmed26n0001.xml.gz.md5")) == 2  # one failed attempt, then the sidecar


@pytest.mark.django_db
def test_the_admin_shows_each_jobs_progress_and_files(server: NcbiTestServer, admin_client: Client) -> None:
    sync(server, "--max-files", "1")
    job = IndexJob.objects.get()

    listing = admin_client.get("/admin/corpus/indexjob/").content.decode()
    detail = admin_client.get(f"/admin/corpus/indexjob/{job.pk}/change/").content.decode()

    assert "1/1 (0 failed)" in listing
    assert "pubmed26n0001.xml.gz" in detail
