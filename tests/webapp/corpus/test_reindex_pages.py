"""The admin's index pages: who may see them, which files they accept, and what the job and status pages show.

Jobs run eagerly in the test process through the real engines (SQLite, tantivy, qdrant-edge, MiniLM).
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from pytest_django.fixtures import Settings

from tests.webapp.corpus.reindex_fixtures import CORPUS_XML, allowed_dir_fixture, eager_indexing_fixture  # noqa: F401
from webapp.corpus import engines
from webapp.corpus.models import Article, IndexJob, PubmedFile

pytestmark = [pytest.mark.model, pytest.mark.django_db, pytest.mark.usefixtures("eager_indexing")]

Capture = Callable[..., Any]


def start_from_page(client: Client, capture: Capture, data: dict[str, Any]) -> Any:
    """Submit the start page and run what it queued once committed, as a worker would."""
    with capture(execute=True):
        return client.post("/index/jobs/new", data)


def uploading(upload: SimpleUploadedFile) -> dict[str, Any]:
    return {"action": "upload", "upload": upload}


def text_of(response: Any) -> str:
    return str(response.content.decode())


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", "/index/"),
        ("get", "/index/jobs/new"),
        ("post", "/index/jobs/new"),
        ("get", "/index/jobs/{job}/"),
        ("get", "/index/jobs/{job}.json"),
        ("post", "/index/jobs/{job}/cancel"),
    ],
)
def test_researchers_and_reviewers_are_refused_and_anonymous_visitors_sent_to_sign_in(
    method: str, url: str, researcher_client: Client, reviewer_client: Client, client: Client
) -> None:
    job = IndexJob.objects.create(kind=IndexJob.Kind.FILES)
    path = url.format(job=job.pk)

    for signed_in in (researcher_client, reviewer_client):
        assert getattr(signed_in, method)(path, {"action": "rebuild", "confirm": "on"}).status_code == 403
    anonymous = getattr(client, method)(path)

    if path.endswith(".json"):
        assert anonymous.status_code == 401
    else:
        assert anonymous.status_code == 302
        assert anonymous["Location"].startswith("/accounts/login/?next=")
    assert IndexJob.objects.count() == 1
    assert not IndexJob.objects.get().cancel_requested


def test_the_start_page_lists_corpus_files_of_the_allowed_folders_only(
    site_admin_client: Client, allowed_dir: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "secret.xml"
    outside.write_text(CORPUS_XML)
    (allowed_dir / "escape.xml").symlink_to(outside)

    page = text_of(site_admin_client.get("/index/jobs/new"))

    assert f'value="{allowed_dir / "corpus.xml"}"' in page
    assert f'value="{allowed_dir / "sub" / "more.xml"}"' in page
    assert "notes.txt" not in page
    assert "escape.xml" not in page
    assert "secret.xml" not in page
    for action in ("path", "upload", "updates", "rebuild"):
        assert f'name="action" value="{action}"' in page


@pytest.mark.parametrize(
    "make_path",
    [
        pytest.param(lambda allowed, outside: f"{allowed}/../secret.xml", id="dot-dot"),
        pytest.param(lambda allowed, outside: f"{allowed}/sub/../../secret.xml", id="dot-dot-from-a-subfolder"),
        pytest.param(lambda allowed, outside: str(outside), id="absolute-outside"),
        pytest.param(lambda allowed, outside: f"{allowed}/escape.xml", id="symlink-escape"),
        pytest.param(lambda allowed, outside: "../secret.xml", id="relative"),
        pytest.param(lambda allowed, outside: "/etc/passwd", id="system-file"),
    ],
)
def test_a_path_outside_the_allowed_folders_is_refused(
    make_path: Callable[[Path, Path], str],
    site_admin_client: Client,
    allowed_dir: Path,
    tmp_path: Path,
    django_capture_on_commit_callbacks: Capture,
) -> None:
    outside = tmp_path / "secret.xml"
    outside.write_text(CORPUS_XML)
    (allowed_dir / "escape.xml").symlink_to(outside)

    response = start_from_page(
        site_admin_client,
        django_capture_on_commit_callbacks,
        {"action": "path", "path": make_path(allowed_dir, outside)},
    )

    assert response.status_code == 400
    assert re.search(r"outside the folders files may be ingested from|full path", text_of(response))
    assert not IndexJob.objects.exists()
    assert not Article.objects.exists()


def test_a_file_of_another_type_inside_an_allowed_folder_is_refused(
    site_admin_client: Client, allowed_dir: Path, django_capture_on_commit_callbacks: Capture
) -> None:
    response = start_from_page(
        site_admin_client,
        django_capture_on_commit_callbacks,
        {"action": "path", "path": str(allowed_dir / "notes.txt")},
    )

    assert response.status_code == 400
    assert "notes.txt is not a .xml, .xml.gz, .jsonl or .jsonl.gz file." in text_of(response)
    assert not IndexJob.objects.exists()


def test_an_upload_over_the_size_limit_is_refused_with_the_limit(
    site_admin_client: Client, settings: Settings, django_capture_on_commit_callbacks: Capture, tmp_path: Path
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_UPLOAD_MAX_BYTES=100)
    upload = SimpleUploadedFile("big.xml", CORPUS_XML.encode(), content_type="application/xml")

    response = start_from_page(
        site_admin_client, django_capture_on_commit_callbacks, {"action": "upload", "upload": upload}
    )

    assert response.status_code == 400
    assert "uploads are limited to 0.0 MB" in text_of(response)
    assert not IndexJob.objects.exists()
    assert not (tmp_path / "var" / "uploads").exists() or not any((tmp_path / "var" / "uploads").iterdir())


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("corpus.pdf", b"%PDF-1.4", "corpus.pdf cannot be ingested: upload a .xml, .xml.gz, .jsonl or .jsonl.gz file"),
        ("corpus.xml.gz", CORPUS_XML.encode(), "corpus.xml.gz is named .gz but is not gzip-compressed."),
    ],
)
def test_an_upload_of_the_wrong_type_is_refused(
    name: str, content: bytes, message: str, site_admin_client: Client, django_capture_on_commit_callbacks: Capture
) -> None:
    upload = SimpleUploadedFile(name, content)

    response = start_from_page(
        site_admin_client, django_capture_on_commit_callbacks, {"action": "upload", "upload": upload}
    )

    assert response.status_code == 400
    assert message in text_of(response)
    assert not IndexJob.objects.exists()


def test_an_uploaded_gzip_file_is_kept_under_uploads_and_ingested(
    site_admin_client: Client, django_capture_on_commit_callbacks: Capture, tmp_path: Path
) -> None:
    upload = SimpleUploadedFile("../../evil name.xml.gz", gzip.compress(CORPUS_XML.encode()))

    response = start_from_page(
        site_admin_client, django_capture_on_commit_callbacks, {"action": "upload", "upload": upload}
    )

    job = IndexJob.objects.get()
    assert response.status_code == 302
    assert (job.kind, job.status, job.files_done, job.articles) == ("files", "done", 1, 2)
    stored = PubmedFile.objects.get()
    assert Path(stored.source_path).parent == tmp_path / "var" / "uploads"
    assert stored.source_path.endswith("-evil_name.xml.gz")
    assert Path(stored.source_path).is_file(), "an upload stays for a re-run"
    assert set(Article.objects.values_list("pmid", flat=True)) == {"41000001", "41000002"}


def test_the_job_json_reports_progress_counts_and_the_log(
    site_admin_client: Client, allowed_dir: Path, django_capture_on_commit_callbacks: Capture
) -> None:
    start_from_page(
        site_admin_client,
        django_capture_on_commit_callbacks,
        {"action": "path", "path": str(allowed_dir / "corpus.xml")},
    )
    job = IndexJob.objects.get()

    data = json.loads(site_admin_client.get(f"/index/jobs/{job.pk}.json").content)

    assert data["status"] == "done"
    assert data["finished"] is True
    assert data["progress"] == {"value": 1, "max": 1, "unit": "files", "percent": 100}
    assert data["files"] == {"total": 1, "done": 1, "failed": 0, "cancelled": 0}
    assert data["articles"] == 2
    assert data["articles_per_second"] > 0
    assert data["eta_seconds"] is None
    assert data["failed_files"] == []
    messages = [line["message"] for line in data["log"]]
    assert messages[0].startswith("ingest of local:corpus.xml started by admin-user")
    assert "local:corpus.xml: indexed (2 articles)" in messages
    assert messages[-1].startswith("the indexes hold 2 documents")
    assert all(line["at"] for line in data["log"])


def test_the_job_page_shows_a_progress_bar_the_log_escaped_and_a_cancel_button_while_it_runs(
    site_admin_client: Client,
) -> None:
    job = IndexJob.objects.create(kind=IndexJob.Kind.FILES, files_total=4, files_done=1, files_failed=1)
    job.events.create(message="<script>alert(1)</script> arrived")
    PubmedFile.objects.create(name="bad<b>.xml", status="failed", error="md5 <mismatch>", attempts=3, job=job)

    page = text_of(site_admin_client.get(f"/index/jobs/{job.pk}/"))

    assert re.search(
        r'<progress id="job-progress" max="4" value="2"\s+aria-valuemin="0" aria-valuemax="4" aria-valuenow="2"', page
    )
    assert "&lt;script&gt;alert(1)&lt;/script&gt; arrived" in page
    assert "<script>alert(1)" not in page
    assert "bad&lt;b&gt;.xml" in page
    assert "md5 &lt;mismatch&gt;" in page
    assert f'action="/index/jobs/{job.pk}/cancel"' in page
    assert 'src="/static/index-job.js"' in page


def test_the_status_page_shows_the_counts_of_each_engine(
    site_admin_client: Client, allowed_dir: Path, django_capture_on_commit_callbacks: Capture
) -> None:
    start_from_page(
        site_admin_client,
        django_capture_on_commit_callbacks,
        {"action": "path", "path": str(allowed_dir / "corpus.xml")},
    )
    Article.objects.filter(pmid="41000002").update(embedded=False)  # as if its embed step were still to come

    page = text_of(site_admin_client.get("/index/"))

    lexical, points = engines.lexical_index().count(), engines.vector_index().count()
    assert (lexical, points) == (2, 2)
    assert '<td id="count-articles">2</td>' in page
    assert '<span id="count-embedded">1</span> embedded, <span id="count-pending">1</span> waiting' in page
    assert f'<td id="count-lexical">{lexical}</td>' in page
    assert f'<td id="count-vectors">{points}</td>' in page
    assert '<strong id="active-generation">g1</strong>' in page
    assert "local:corpus.xml" in page  # the latest indexed file
    assert f'href="/index/jobs/{IndexJob.objects.get().pk}/"' in page
    assert 'href="/index/jobs/new"' in page


def test_the_status_page_falls_back_on_the_count_a_worker_recorded_when_it_holds_the_shard(
    site_admin_client: Client,
) -> None:
    engines.release_engines()  # this process holds no engine, like the site beside a worker
    IndexJob.objects.create(kind="files", status="done", vector_points=1234, finished_at="2026-01-02T03:04:00Z")

    page = text_of(site_admin_client.get("/index/"))

    assert '<td id="count-vectors">1234</td>' in page
    assert "held by the worker: as counted when job" in page
    assert '<td id="count-lexical">0</td>' in page


def test_the_status_page_lists_failed_files_with_their_error_and_attempts(site_admin_client: Client) -> None:
    job = IndexJob.objects.create(kind="baseline", status="failed", files_total=1, files_failed=1)
    PubmedFile.objects.create(name="pubmed26n0007.xml.gz", status="failed", error="md5 mismatch", attempts=5, job=job)

    page = text_of(site_admin_client.get("/index/"))

    assert re.search(r"pubmed26n0007\.xml\.gz</code></td><td[^>]*>md5 mismatch</td><td>5</td>", page)


def test_the_admin_job_list_links_to_the_start_page_and_each_job_page(site_admin_client: Client) -> None:
    job = IndexJob.objects.create(kind=IndexJob.Kind.FILES)

    listing = text_of(site_admin_client.get("/admin/corpus/indexjob/"))

    assert 'href="/index/jobs/new"' in listing
    assert "Start a re-index" in listing
    assert f'href="/index/jobs/{job.pk}/"' in listing
