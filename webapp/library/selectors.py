"""Reads of a researcher's library."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Count, QuerySet, Sum

from webapp.accounts.roles import AnyUser
from webapp.library.models import Document, DocumentFile, Passage


def documents_of(*, user: AnyUser) -> QuerySet[Document]:
    """The user's own documents, newest first, each with its passage count."""
    if user.pk is None:
        return Document.objects.none()
    return Document.objects.filter(owner__pk=user.pk, deleting=False).annotate(passage_count=Count("passages"))


def library_usage(*, owner_id: int | None) -> tuple[int, int]:
    """How many documents a library holds and their files' bytes together (those being deleted included: they hold
    their room until they are gone): the limits line and the limits themselves."""
    if owner_id is None:
        return 0, 0
    held = Document.objects.filter(owner_id=owner_id).aggregate(count=Count("pk"), size=Sum("byte_size"))
    return held["count"], held["size"] or 0


def documents_awaiting_index(*, queued_since: datetime) -> QuerySet[Document]:
    """Documents whose indexing is queued or running (queued since `queued_since`: one queued before is lost): work
    the embed workers do, which the queue valve counts beside questions."""
    return Document.objects.filter(
        indexed_at__isnull=True, deleting=False, index_error="", index_queued_at__gte=queued_since
    )


def passages_of_document(*, document: Document) -> QuerySet[Passage]:
    return Passage.objects.filter(document=document).order_by("ordinal")


def passage_of_document(*, document: Document, ordinal: int | None) -> Passage | None:
    if ordinal is None:
        return None
    return Passage.objects.filter(document=document, ordinal=ordinal).first()


def document_bytes(*, document: Document) -> bytes:
    return bytes(DocumentFile.objects.get(document=document).data)
