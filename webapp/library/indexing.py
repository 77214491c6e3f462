"""Putting a document's passages into the library's two indexes, and taking them out again: the work the library's
tasks do in the worker, which holds the indexes (webapp/library/engines.py)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from indexer.library_records import library_add, library_remove, passage_index_id, passage_records
from webapp.corpus.engines import embedder
from webapp.library.engines import library_lexical_index, library_vector_index, release_library_engines
from webapp.library.models import Document, Passage
from webapp.task_locks import running_alone

logger = logging.getLogger(__name__)


def document_index_queued(*, document_id: int) -> None:
    """The indexing task's work: `document_index`, once. A copy of the task that arrives while another runs, or after
    the document was indexed (a redelivery, a second "Index again"), does nothing: every run embeds every passage."""
    with running_alone(f"library-document-index-{document_id}") as alone:
        if not alone or Document.objects.filter(pk=document_id, indexed_at__isnull=False).exists():
            logger.info("document %s: indexed or being indexed; this copy of its task does nothing", document_id)
            return
        document_index(document_id=document_id)


def document_index(*, document_id: int) -> int:
    """Both legs get every passage of the document (idempotent: ids are stable, a second run replaces the first's);
    the number of passages written. A document deleted meanwhile is left alone, or taken out again when the deletion
    came while this ran."""
    document = Document.objects.filter(pk=document_id, deleting=False).first()
    if document is None:
        return 0
    passages = list(Passage.objects.filter(document=document).order_by("ordinal"))
    records = passage_records(
        owner=str(document.owner_id), document_id=document.pk, title=document.title, passages=passages
    )
    lexical, vectors = library_lexical_index(), library_vector_index()
    library_add(records, lexical=lexical, vectors=vectors, embedder=embedder())
    with transaction.atomic():
        # A document written again (a reindex, a restore) has been searchable since its first indexing: the page says
        # so, and a restore leaves every row as the backup holds it.
        updated = Document.objects.filter(pk=document.pk, deleting=False).update(
            indexed_at=Coalesce("indexed_at", Value(timezone.now())), index_error=""
        )
    if not updated:  # deleted while its passages were being written: the deletion may have run before them
        library_remove([record.pmid for record in records], lexical=lexical, vectors=vectors)
        return 0
    return len(records)


@dataclass(frozen=True)
class Reindexed:
    documents: int
    passages: int


def library_reindex(
    *, owner_id: int | None = None, progress: Callable[[int, int, int], None] | None = None
) -> Reindexed:
    """Every document's passages (one owner's, or everyone's) into the library's indexes again: after a restore (a
    backup holds the documents but not these indexes), a change of embedding model, or indexes lost. `progress` gets
    (number, of, document id) after each. The indexes are closed at the end: the embedded vector shard admits one
    process, and the worker opens it next."""
    documents = Document.objects.filter(deleting=False).order_by("pk")
    if owner_id is not None:
        documents = documents.filter(owner_id=owner_id)
    ids = list(documents.values_list("pk", flat=True))
    passages = 0
    try:
        for number, document_id in enumerate(ids, start=1):
            passages += document_index(document_id=document_id)
            if progress is not None:
                progress(number, len(ids), document_id)
    finally:
        release_library_engines()
    return Reindexed(documents=len(ids), passages=passages)


def document_index_failed(*, document_id: int, reason: str) -> None:
    Document.objects.filter(pk=document_id).update(index_error=reason[:2000])


def document_delete_failed(*, document_id: int) -> None:
    Document.objects.filter(pk=document_id).update(deleting=False)


def document_unindex(*, document_id: int) -> None:
    """Every passage out of both legs, then the document, its file and passages out of the database."""
    document = Document.objects.filter(pk=document_id).first()
    if document is None:
        return
    ordinals = Passage.objects.filter(document=document).values_list("ordinal", flat=True)
    ids = [passage_index_id(document.pk, ordinal) for ordinal in ordinals]
    library_remove(ids, lexical=library_lexical_index(), vectors=library_vector_index())
    document.delete()
    logger.info("document %s deleted with its %d passages", document_id, len(ids))
