"""Library work has limits: an hourly limit on uploads and indexing, the room and the queue valve checked before a
file is read, the documents waiting to be indexed counted in the valve, and one indexing task per document."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from tests.indexer.jats_samples import jats_article, pqal_pmids, pqal_record
from tests.webapp.factories import library_document
from webapp.library import indexing, services
from webapp.library.admission import DocumentRefusedError
from webapp.library.models import Document, LibraryAction
from webapp.library.services import document_index_again, document_upload
from webapp.library.tasks import document_index_task
from webapp.qa.models import Question
from webapp.qa.services.admission import QueueFullError, question_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(role_users: dict[str, User]) -> User:
    return role_users["researcher"]


@pytest.fixture
def papers(data_dir: Path) -> list[bytes]:
    return [jats_article(pqal_record(data_dir, pmid), pmid=pmid) for pmid in pqal_pmids(data_dir)[:3]]


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each file the reader was handed (its size): the web worker's time an upload costs."""
    handed: list[int] = []
    real = services.read_full_text

    def counted(data: bytes, **kwargs: Any) -> Any:
        handed.append(len(data))
        return real(data, **kwargs)

    monkeypatch.setattr(services, "read_full_text", counted)
    return handed


def test_uploads_past_the_hourly_limit_are_refused_with_429_before_the_file_is_read(
    owner: User, papers: list[bytes], reads: list[int], settings: Any
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_LIBRARY_ACTIONS_PER_HOUR=2)
    document_upload(owner=owner, filename="a.xml", data=papers[0])
    document_upload(owner=owner, filename="a.xml", data=papers[0])  # the same file again: free, and not read
    document_upload(owner=owner, filename="b.xml", data=papers[1])

    with pytest.raises(DocumentRefusedError) as refused:
        document_upload(owner=owner, filename="c.xml", data=papers[2])

    assert refused.value.http_status == 429
    assert refused.value.retry_after_seconds is not None
    assert 3500 < refused.value.retry_after_seconds <= 3600
    assert "2 times in the last hour" in str(refused.value)
    assert len(reads) == 2
    assert Document.objects.count() == 2


def test_a_deleted_document_still_counts_against_the_hourly_limit(
    owner: User, papers: list[bytes], settings: Any
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_LIBRARY_ACTIONS_PER_HOUR=1)
    document_upload(owner=owner, filename="a.xml", data=papers[0])
    Document.objects.all().delete()

    with pytest.raises(DocumentRefusedError) as refused:
        document_upload(owner=owner, filename="b.xml", data=papers[1])
    assert refused.value.http_status == 429


def test_a_full_library_refuses_before_the_file_is_read(
    owner: User, papers: list[bytes], reads: list[int], settings: Any
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_LIBRARY_MAX_DOCUMENTS=1)
    document_upload(owner=owner, filename="a.xml", data=papers[0])

    with pytest.raises(DocumentRefusedError) as full:
        document_upload(owner=owner, filename="b.xml", data=papers[1])

    assert full.value.http_status == 403
    assert len(reads) == 1


def test_a_busy_site_refuses_uploads_with_503_before_the_file_is_read(
    owner: User, papers: list[bytes], reads: list[int], settings: Any
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MAX_QUEUED_QUESTIONS=1)
    Question.objects.create(text="Waiting?", settings={})

    with pytest.raises(DocumentRefusedError) as busy:
        document_upload(owner=owner, filename="a.xml", data=papers[0])

    assert busy.value.http_status == 503
    assert "1 question is waiting" in str(busy.value)
    assert reads == []


def test_documents_waiting_to_be_indexed_take_a_place_in_the_queue_valve(owner: User, settings: Any) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MAX_QUEUED_QUESTIONS=2)
    for title in ("one", "two"):
        document = library_document(owner=owner, title=title)
        Document.objects.filter(pk=document.pk).update(index_queued_at=timezone.now())

    with pytest.raises(QueueFullError, match="2 library documents to index are waiting"):
        question_create(text="Is metformin safe?", user=owner, enqueue=True)


def test_index_again_queues_one_task_per_document_whatever_the_requests(
    owner: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    published: list[int] = []
    monkeypatch.setattr(services, "_publish_indexing", published.append)
    failed = library_document(owner=owner, title="failed")
    Document.objects.filter(pk=failed.pk).update(index_error="the embedder was unreachable")
    indexed = library_document(owner=owner, title="indexed")
    Document.objects.filter(pk=indexed.pk).update(indexed_at=timezone.now())
    waiting = library_document(owner=owner, title="waiting")
    Document.objects.filter(pk=waiting.pk).update(index_queued_at=timezone.now())

    assert document_index_again(document=failed) is True
    assert document_index_again(document=failed) is False  # queued already
    assert document_index_again(document=indexed) is False
    assert document_index_again(document=waiting) is False

    assert published == [failed.pk]
    assert list(LibraryAction.objects.values_list("kind", flat=True)) == [LibraryAction.Kind.INDEX]


def test_posting_index_again_many_times_from_the_page_queues_it_once(
    owner: User, researcher_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    published: list[int] = []
    monkeypatch.setattr(services, "_publish_indexing", published.append)
    document = library_document(owner=owner)
    Document.objects.filter(pk=document.pk).update(index_error="the embedder was unreachable")

    for _ in range(5):
        assert researcher_client.post(f"/library/{document.pk}/index").status_code == 302

    assert published == [document.pk]


def test_a_second_copy_of_the_indexing_task_embeds_nothing_once_the_document_is_indexed(
    owner: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedded: list[object] = []
    monkeypatch.setattr(indexing, "library_add", lambda records, **kwargs: embedded.append(records))
    document = library_document(owner=owner)
    Document.objects.filter(pk=document.pk).update(indexed_at=timezone.now())

    document_index_task.apply(args=(document.pk,))

    assert embedded == []
