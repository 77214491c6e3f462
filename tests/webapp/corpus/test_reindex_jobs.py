"""Jobs started from the admin's index pages, run eagerly through the real engines: files, PubMed update syncs and
rebuilds; cancelled before they run and while they run."""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db.models.signals import post_save
from django.test import Client
from pytest_django.fixtures import Settings

from tests.ncbi_server import UPDATES, serve_ncbi
from tests.webapp.corpus.reindex_fixtures import allowed_dir_fixture, eager_indexing_fixture, pubmed_xml  # noqa: F401
from webapp.accounts.roles import ADMIN
from webapp.corpus import engines
from webapp.corpus.models import Article, IndexJob, IndexJobEvent, PubmedFile
from webapp.corpus.services.generations import INITIAL_GENERATION, active_generation
from webapp.corpus.services.jobs import index_job_cancel
from webapp.corpus.services.rebuild import RebuildCancelledError, index_rebuild
from webapp.corpus.services.starting import index_job_start_files

pytestmark = [pytest.mark.model, pytest.mark.django_db, pytest.mark.usefixtures("eager_indexing")]

Capture = Callable[..., Any]


def ingest(path: Path) -> dict[str, str]:
    return {"action": "path", "path": str(path)}


def log_of(job: IndexJob) -> list[str]:
    return list(IndexJobEvent.objects.filter(job=job).order_by("created_at", "pk").values_list("message", flat=True))


@contextmanager
def cancel_when_logged(text: str, admin: User) -> Iterator[None]:
    """Press Cancel (the real service) the moment a job logs `text`: a cancel arriving while the job runs."""

    def on_event(sender: type[IndexJobEvent], instance: IndexJobEvent, created: bool, **_: Any) -> None:
        if created and text in instance.message:
            index_job_cancel(job_id=instance.job_id, user=admin)

    post_save.connect(on_event, sender=IndexJobEvent, weak=False)
    try:
        yield
    finally:
        post_save.disconnect(on_event, sender=IndexJobEvent)


def test_a_files_job_started_from_the_page_indexes_the_file_and_logs_each_step(
    site_admin_client: Client, allowed_dir: Path, django_capture_on_commit_callbacks: Capture
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = site_admin_client.post(
            "/index/jobs/new", {"action": "path", "path": str(allowed_dir / "corpus.xml")}
        )

    job = IndexJob.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/index/jobs/{job.pk}/"
    assert (job.kind, job.status, job.files_total, job.files_done, job.articles) == ("files", "done", 1, 1, 2)
    assert job.started_by is not None
    assert job.started_by.username == "admin-user"
    assert (job.lexical_documents, job.vector_points) == (2, 2)
    assert engines.lexical_index().search("zinc lozenges cold", limit=1)[0].pmid == "41000001"
    assert not Article.objects.filter(embedded=False).exists()
    assert allowed_dir.joinpath("corpus.xml").exists(), "the admin's own file is never deleted"
    log = log_of(job)
    assert log[1].startswith("local:corpus.xml: started (attempt 1)")
    assert any(line.startswith("local:corpus.xml: local file,") for line in log)
    assert "local:corpus.xml: stored 2 articles (2 new or changed, 0 without abstract skipped, 0 deleted)" in log
    assert "local:corpus.xml: indexed (2 articles)" in log
    assert "job done: 1 files indexed, 0 failed, 0 cancelled; 2 articles, 0 deleted" in log


def test_ingesting_the_same_file_again_is_a_new_job_that_rewrites_nothing(
    site_admin_client: Client, allowed_dir: Path, django_capture_on_commit_callbacks: Capture
) -> None:
    for _ in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            site_admin_client.post("/index/jobs/new", ingest(allowed_dir / "corpus.xml"))

    first, second = IndexJob.objects.order_by("pk")
    assert (first.status, second.status) == ("done", "done")
    assert PubmedFile.objects.get().job_id == second.pk
    assert "local:corpus.xml: stored 2 articles (0 new or changed, 0 without abstract skipped, 0 deleted)" in log_of(
        second
    )
    assert engines.lexical_index().count() == 2
    assert engines.vector_index().count() == 2


def test_a_job_cancelled_before_it_runs_processes_none_of_its_files(
    site_admin_client: Client, allowed_dir: Path, django_capture_on_commit_callbacks: Capture
) -> None:
    with django_capture_on_commit_callbacks(execute=False) as queued:
        site_admin_client.post("/index/jobs/new", ingest(allowed_dir / "corpus.xml"))
    job = IndexJob.objects.get()

    response = site_admin_client.post(f"/index/jobs/{job.pk}/cancel")
    for run in queued:  # the worker gets to the queued tasks afterwards
        run()

    job.refresh_from_db()
    assert response.status_code == 302
    assert (job.status, job.cancel_requested, job.files_cancelled, job.files_done) == ("cancelled", True, 1, 0)
    assert job.finished_at is not None
    assert PubmedFile.objects.get().status == "cancelled"
    assert PubmedFile.objects.get().attempts == 0
    assert not Article.objects.exists()
    assert engines.lexical_index().count() == 0
    assert "cancel requested by admin-user" in log_of(job)


def test_a_job_cancelled_while_it_runs_stops_before_its_next_file_and_keeps_what_is_indexed(
    allowed_dir: Path, role_users: dict[str, User], django_capture_on_commit_callbacks: Capture
) -> None:
    admin = role_users[ADMIN]
    paths = [allowed_dir / "corpus.xml", allowed_dir / "sub" / "more.xml"]

    with cancel_when_logged("local:corpus.xml: indexed", admin), django_capture_on_commit_callbacks(execute=True):
        job = index_job_start_files(paths=paths, user=admin)

    job.refresh_from_db()
    assert (job.status, job.files_done, job.files_cancelled, job.files_total) == ("cancelled", 1, 1, 2)
    statuses = dict(PubmedFile.objects.values_list("name", "status"))
    assert statuses == {"local:corpus.xml": "indexed", "local:sub/more.xml": "cancelled"}
    assert set(Article.objects.values_list("pmid", flat=True)) == {"41000001", "41000002"}
    assert "local:sub/more.xml: cancelled: cancelled at an admin's request" in log_of(job)
    assert log_of(job)[-2].startswith("job cancelled: 1 files indexed, 0 failed, 1 cancelled")


def test_a_rebuild_from_the_page_switches_the_generation(
    site_admin_client: Client, allowed_dir: Path, django_capture_on_commit_callbacks: Capture, own_index: Path
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        site_admin_client.post("/index/jobs/new", ingest(allowed_dir / "corpus.xml"))
    assert active_generation() == INITIAL_GENERATION

    with django_capture_on_commit_callbacks(execute=True):
        response = site_admin_client.post("/index/jobs/new", {"action": "rebuild", "confirm": "on"})

    job = IndexJob.objects.get(kind="rebuild")
    assert response["Location"] == f"/index/jobs/{job.pk}/"
    assert (job.status, job.articles, job.articles_total, job.progress) == ("done", 2, 2, (2, 2))
    assert active_generation() == job.generation != INITIAL_GENERATION
    assert (own_index / f"tantivy-{job.generation}").is_dir()
    assert engines.lexical_index().search("warfarin strokes", limit=1)[0].pmid == "41000002"
    assert any(
        line.startswith(f"{job.generation} is live; kept {INITIAL_GENERATION} for rollback") for line in log_of(job)
    )
    page = site_admin_client.get("/index/").content.decode()
    assert f'<strong id="active-generation">{job.generation}</strong>' in page
    assert f"<code>{INITIAL_GENERATION}</code>" in page  # kept for rollback


def test_a_rebuild_cancelled_while_it_runs_leaves_the_active_generation_and_removes_the_partial_one(
    site_admin_client: Client,
    allowed_dir: Path,
    role_users: dict[str, User],
    django_capture_on_commit_callbacks: Capture,
    own_index: Path,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        site_admin_client.post("/index/jobs/new", ingest(allowed_dir / "corpus.xml"))
    before = {path.name for path in own_index.iterdir()}

    admin = role_users[ADMIN]
    with cancel_when_logged("writing every stored article", admin), django_capture_on_commit_callbacks(execute=True):
        site_admin_client.post("/index/jobs/new", {"action": "rebuild", "confirm": "on"})

    job = IndexJob.objects.get(kind="rebuild")
    assert (job.status, job.articles, job.generation) == ("cancelled", 0, "")
    assert active_generation() == INITIAL_GENERATION
    assert {path.name for path in own_index.iterdir() if not path.name.startswith(".")} == {
        name for name in before if not name.startswith(".")
    }
    assert any(
        line.startswith(f"cancelled before the switch: {INITIAL_GENERATION} stays active") for line in log_of(job)
    )
    assert engines.lexical_index().count() == 2


def test_a_rebuild_stopped_after_its_last_batch_still_does_not_switch(allowed_dir: Path, own_index: Path) -> None:
    Article.objects.create(pmid="1", title="Aspirin", abstract="Aspirin eased pain.")
    asked: list[int] = []

    def stop_at_the_end() -> bool:
        asked.append(1)
        return len(asked) > 1  # the batch check passes; the check before the switch stops it

    with pytest.raises(RebuildCancelledError):
        index_rebuild(should_stop=stop_at_the_end)

    assert active_generation() == INITIAL_GENERATION
    assert not [path for path in own_index.iterdir() if path.is_dir() and not path.name.endswith(INITIAL_GENERATION)]


def test_a_second_rebuild_is_refused_while_one_is_unfinished(
    site_admin_client: Client, django_capture_on_commit_callbacks: Capture
) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        site_admin_client.post("/index/jobs/new", {"action": "rebuild", "confirm": "on"})
        response = site_admin_client.post("/index/jobs/new", {"action": "rebuild", "confirm": "on"})

    assert response.status_code == 400
    assert "is still queued: wait for it to finish or cancel it first." in response.content.decode()
    assert IndexJob.objects.count() == 1


def test_the_rebuild_form_must_be_confirmed(site_admin_client: Client) -> None:
    response = site_admin_client.post("/index/jobs/new", {"action": "rebuild"})

    assert response.status_code == 400
    assert not IndexJob.objects.exists()


def test_a_sync_of_pubmed_updates_from_the_page_lists_and_applies_the_update_files(
    site_admin_client: Client, settings: Settings, tmp_path: Path, django_capture_on_commit_callbacks: Capture
) -> None:
    update = pubmed_xml(("41000009", "Metformin and lactate.", "Metformin did not raise lactate in adults."))
    with serve_ncbi(tmp_path / "site") as server:
        server.publish(UPDATES, "pubmed26n1400.xml.gz", gzip.compress(update.encode()))
        settings.VERIMED = settings.VERIMED.replace(VERIMED_PUBMED_UPDATES_URL=server.url(UPDATES))

        with django_capture_on_commit_callbacks(execute=True):
            response = site_admin_client.post("/index/jobs/new", {"action": "updates", "max_files": ""})

    job = IndexJob.objects.get()
    assert response["Location"] == f"/index/jobs/{job.pk}/"
    assert (job.kind, job.status, job.files_total, job.files_done, job.articles) == ("updates", "done", 1, 1, 1)
    assert PubmedFile.objects.get().name == "pubmed26n1400.xml.gz"
    assert Article.objects.get().pmid == "41000009"
    assert "1 files listed; 0 already indexed; 1 to process now" in log_of(job)


def test_a_sync_whose_listing_cannot_be_read_fails_the_job_with_the_reason(
    site_admin_client: Client, settings: Settings, django_capture_on_commit_callbacks: Capture
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_PUBMED_UPDATES_URL="http://127.0.0.1:9/pubmed/updatefiles/")

    with django_capture_on_commit_callbacks(execute=True):
        site_admin_client.post("/index/jobs/new", {"action": "updates"})

    job = IndexJob.objects.get()
    assert job.status == "failed"
    assert job.finished_at is not None
    assert job.error
    assert any(line.startswith("cannot list http://127.0.0.1:9/pubmed/updatefiles/") for line in log_of(job))
