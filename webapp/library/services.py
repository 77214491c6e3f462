"""Adding a paper to a researcher's library and taking it out again.

A file is read and cut into passages before anything is stored, and the document, its file and its passages are
stored in one transaction: a refused or failed upload leaves no trace. The owner's row is locked while the limits
are checked, so two uploads at once cannot both slip under them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from indexer.full_text import FullTextError
from indexer.full_text_files import read_full_text
from indexer.library_passages import passages_of
from webapp.accounts.roles import AnyUser
from webapp.corpus.models import Article
from webapp.library.models import Document, DocumentFile, Passage
from webapp.library.selectors import library_usage
from webapp.task_publishing import task_publish_or_record

# A file is read while its upload request waits, and the web server ends a request at 60 s (gunicorn's --timeout in
# the stack and docker-compose.yml): a PDF still being read by then (OCR of a long scan) is refused with that reason
# rather than cut off with a bare error.
READING_SECONDS = 45.0


class DocumentRefusedError(Exception):
    """An upload refused, with the reason for the uploader and the HTTP status that says what kind of refusal."""

    def __init__(self, message: str, *, http_status: int = 400) -> None:
        super().__init__(message)
        self.http_status = http_status


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
        _check_room(owner_pk=owner_pk, adding=len(data))
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


def document_index_again(*, document: Document) -> None:
    """Queue the indexing of a document whose indexing failed or never got queued; harmless when it is indexed."""
    Document.objects.filter(pk=document.pk).update(index_error="")
    _publish_indexing(document.pk)


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


def _check_room(*, owner_pk: int, adding: int) -> None:
    limits = settings.VERIMED.limits
    count, size = library_usage(owner_id=owner_pk)
    if limits.library_max_documents and count >= limits.library_max_documents:
        raise DocumentRefusedError(
            f"your library holds {count} documents, the most it may; delete some to add more", http_status=403
        )
    if limits.library_max_bytes and size + adding > limits.library_max_bytes:
        raise DocumentRefusedError(
            f"your library holds {size_in_words(size)} of files; this one would take it past the limit of "
            f"{size_in_words(limits.library_max_bytes)}: delete some to add more",
            http_status=403,
        )


def clean_filename(name: str) -> str:
    """The last part of the name the browser sent, without control characters, at most 255 characters."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    return "".join(character for character in base if character.isprintable())[:255] or "unnamed"


def size_in_words(size: int) -> str:
    """Bytes below a MiB (a limit set low, a small file), MiB above, where a decimal place is enough."""
    return f"{size:,} bytes" if size < 1024 * 1024 else f"{size / (1024 * 1024):.1f} MiB"
