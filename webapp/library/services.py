"""Adding a paper to a researcher's library and taking it out again.

A file is read and cut into passages before anything is stored, and the document, its file and its passages are
stored in one transaction: a refused or failed upload leaves no trace. The owner's row is locked while the limits
are checked, so two uploads at once cannot both slip under them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from indexer.full_text import FullTextError
from indexer.full_text_files import read_full_text
from indexer.library_passages import passages_of
from webapp.accounts.roles import AnyUser
from webapp.corpus.models import Article
from webapp.library.admission import DocumentRefusedError, library_room_check, library_work_admit, size_in_words
from webapp.library.models import Document, DocumentFile, LibraryAction, Passage
from webapp.task_publishing import task_publish_or_record

# A file is read while its upload request waits, and the web server ends a request at 60 s (gunicorn's --timeout in
# the stack and docker-compose.yml): a PDF still being read by then (OCR of a long scan) is refused with that reason
# rather than cut off with a bare error.
READING_SECONDS = 45.0


@dataclass(frozen=True)
class Upload:
    document: Document
    created: bool  # False: the owner had uploaded these very bytes before, and that document is returned


def document_upload(*, owner: AnyUser, filename: str, data: bytes) -> Upload:
    owner_pk = _signed_in(owner)
    filename = clean_filename(filename)  # as stored and as every message names it
    limits = settings.VERIMED.limits
    if len(data) > limits.library_file_max_bytes:
        limit = size_in_words(limits.library_file_max_bytes)
        raise DocumentRefusedError(
            f"{filename}: the file is {size_in_words(len(data))}; a paper may be at most {limit}", http_status=413
        )
    digest = hashlib.sha256(data).hexdigest()
    known = Document.objects.filter(owner__pk=owner_pk, sha256=digest).first()
    if known is not None:
        return _known(known, filename)
    # The hourly limit, the room left and the queue valve before the read (up to READING_SECONDS of this web worker's
    # time, OCR included): a full library or a busy site costs no read. Room is checked again once the file is read.
    library_work_admit(owner_pk=owner_pk, kind=LibraryAction.Kind.UPLOAD, adding_bytes=len(data))
    try:
        read = read_full_text(
            data,
            max_bytes=limits.library_file_max_bytes,
            max_pages=limits.library_max_pages,
            max_seconds=READING_SECONDS,
        )
    except FullTextError as exc:
        raise DocumentRefusedError(f"{filename}: {exc}") from None
    passages = passages_of(read.article)
    if not passages:
        raise DocumentRefusedError(f"{filename}: no text could be read from it")
    article = read.article
    with transaction.atomic():
        get_user_model().objects.select_for_update().filter(pk=owner_pk).first()
        known = Document.objects.filter(owner__pk=owner_pk, sha256=digest).first()  # the same file, uploaded meanwhile
        if known is not None:
            return _known(known, filename)
        library_room_check(owner_pk=owner_pk, adding=len(data))
        document = Document.objects.create(
            owner_id=owner_pk,
            kind=read.kind,
            filename=filename,
            sha256=digest,
            byte_size=len(data),
            pages=article.pages,
            title=article.title[:2000],
            doi=(article.doi or "")[:256],
            pmid=(article.pmid or "")[:32],
            pmcid=(article.pmcid or "")[:32],
            article=Article.objects.filter(pmid=article.pmid).first() if article.pmid else None,
            index_queued_at=timezone.now(),
        )
        DocumentFile.objects.create(document=document, data=data)
        transaction.on_commit(lambda: _publish_indexing(document.pk))
        Passage.objects.bulk_create(
            Passage(
                document=document,
                ordinal=passage.ordinal,
                section=passage.section[:512],
                page=passage.page,
                text=passage.text,
                ocr=passage.ocr,
            )
            for passage in passages
        )
    return Upload(document=document, created=True)


def _signed_in(user: AnyUser) -> int:
    if user.pk is None:
        raise DocumentRefusedError("sign in to keep papers in a library", http_status=403)
    return int(user.pk)


def _known(document: Document, filename: str) -> Upload:
    if document.deleting:
        raise DocumentRefusedError(
            f"{filename}: this very file is being deleted from your library; upload it again in a minute",
            http_status=409,
        )
    return Upload(document=document, created=False)


def document_index_again(*, document: Document) -> bool:
    """Queue the indexing of a document whose indexing failed, never got queued, or was queued so long ago that its
    task is lost; False (nothing queued) when it is indexed or its indexing is already queued. One task per document:
    the row is claimed by a conditional update, so requests sent together queue it once. DocumentRefusedError when the
    owner's hourly limit or the queue valve refuses."""
    if not _index_again_needed().filter(pk=document.pk).exists():
        return False
    library_work_admit(owner_pk=int(document.owner_id), kind=LibraryAction.Kind.INDEX)
    claimed = _index_again_needed().filter(pk=document.pk).update(index_error="", index_queued_at=timezone.now())
    if claimed:
        _publish_indexing(document.pk)
    return bool(claimed)


def document_index_may_be_queued(*, document: Document) -> bool:
    """Whether "Index again" would queue anything: the page shows the button only then."""
    return _index_again_needed().filter(pk=document.pk).exists()


def _index_again_needed() -> QuerySet[Document]:
    lost = timezone.now() - timedelta(minutes=settings.VERIMED.tasks.question_lost_minutes)
    waiting_too_long = Q(index_queued_at__isnull=True) | Q(index_queued_at__lt=lost)
    return Document.objects.filter(indexed_at__isnull=True, deleting=False).filter(
        ~Q(index_error="") | waiting_too_long
    )


def _publish_indexing(document_id: int) -> None:
    from webapp.library.tasks import document_index_task

    task_publish_or_record(
        document_index_task.si(document_id),
        what=f"indexing library document {document_id}",
        record_unreachable=lambda: _set(document_id, index_error=_QUEUE_DOWN_INDEX),
    )


def _set(document_id: int, **fields: object) -> None:
    Document.objects.filter(pk=document_id).update(**fields)


_QUEUE_DOWN_INDEX = "The task queue was unreachable, so this document is not searchable yet: use “Index again”."


def document_delete(*, document: Document) -> None:
    """Hide the document at once and queue its removal from both indexes and then the database. When the queue is
    unreachable nothing changes and the owner is told to try again (DocumentRefusedError, 503)."""
    from webapp.library.tasks import document_unindex_task

    Document.objects.filter(pk=document.pk).update(deleting=True)
    queued = task_publish_or_record(
        document_unindex_task.si(document.pk),
        what=f"deleting library document {document.pk}",
        record_unreachable=lambda: _set(document.pk, deleting=False),
    )
    if not queued:
        raise DocumentRefusedError(
            f"{document.filename}: the task queue is unreachable, so it was not deleted. Please try again shortly.",
            http_status=503,
        )


def clean_filename(name: str) -> str:
    """The last part of the name the browser sent, without control characters, at most 255 characters."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    return "".join(character for character in base if character.isprintable())[:255] or "unnamed"
