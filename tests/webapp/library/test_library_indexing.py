"""A library document in the search legs: indexed by the worker's task into the library's own tantivy index and
Qdrant shard (real engines, the real MiniLM embedder), found only by its owner's searches, and taken out of both legs
and the database when deleted."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from indexer.base import SearchFilters
from indexer.hybrid import HybridSettings, hybrid_search
from indexer.library_records import parse_passage_index_id
from indexer.ownership import OwnershipError
from tests.indexer.jats_samples import jats_article, pqal_pmids, pqal_record
from webapp.corpus import engines
from webapp.library import indexing
from webapp.library.engines import library_lexical_index, library_qdrant_location, library_vector_index
from webapp.library.models import Document, DocumentFile, Passage
from webapp.library.services import DocumentRefusedError, document_delete, document_upload

pytestmark = pytest.mark.django_db


def _paper(data_dir: Path, index: int) -> tuple[bytes, dict[str, object]]:
    pmid = pqal_pmids(data_dir)[index]
    record = pqal_record(data_dir, pmid)
    return jats_article(record, pmid=pmid), record


def _search(query: str, owner: User, *, mode: str = "hybrid") -> list[tuple[int, int]]:
    hits = hybrid_search(
        query,
        lexical=library_lexical_index(),
        vectors=library_vector_index(),
        embedder=engines.embedder(),
        settings=HybridSettings(top_k=50, mode=mode, expand_query=False),  # type: ignore[arg-type]
        filters=SearchFilters(owner=str(owner.pk)),
    )
    return [parsed for hit in hits if (parsed := parse_passage_index_id(hit.pmid)) is not None]


@pytest.mark.usefixtures("library_engines")
def test_an_indexed_document_is_found_by_its_owner_alone_in_each_leg(role_users, data_dir):
    owner, other = role_users["researcher"], role_users["reviewer"]
    paper, record = _paper(data_dir, 3)
    others_paper, _ = _paper(data_dir, 4)
    mine = document_upload(owner=owner, filename="mine.xml", data=paper).document
    theirs = document_upload(owner=other, filename="theirs.xml", data=others_paper).document
    same_file = document_upload(owner=other, filename="same.xml", data=paper).document  # their own copy

    for document in (mine, theirs, same_file):
        indexing.document_index(document_id=document.pk)

    query = str(record["QUESTION"])
    for mode in ("lexical", "semantic", "hybrid"):
        found = _search(query, owner, mode=mode)
        assert found, mode
        assert {document for document, _ in found} == {mine.pk}, mode
        assert {document for document, _ in _search(query, other, mode=mode)} <= {theirs.pk, same_file.pk}, mode
    first_document, first_ordinal = _search(query, owner)[0]
    assert Passage.objects.filter(document_id=first_document, ordinal=first_ordinal).exists()
    mine.refresh_from_db()
    assert mine.indexed_at is not None
    assert mine.index_error == ""
    with pytest.raises(OwnershipError):  # a library search always names its owner
        library_lexical_index().search(query, limit=5)


@pytest.mark.usefixtures("library_engines")
def test_deleting_takes_every_passage_out_of_both_legs_and_then_the_database(role_users, data_dir):
    owner = role_users["researcher"]
    paper, record = _paper(data_dir, 3)
    kept_paper, _ = _paper(data_dir, 5)
    document = document_upload(owner=owner, filename="a.xml", data=paper).document
    kept = document_upload(owner=owner, filename="b.xml", data=kept_paper).document
    for each in (document, kept):
        indexing.document_index(document_id=each.pk)
    passages = Passage.objects.filter(document=document).count()
    assert library_lexical_index().count() == passages + Passage.objects.filter(document=kept).count()

    document_delete(document=document)  # hides it and queues the task the worker runs:
    indexing.document_unindex(document_id=document.pk)

    query = str(record["QUESTION"])
    for mode in ("lexical", "semantic"):
        assert {found for found, _ in _search(query, owner, mode=mode)} <= {kept.pk}, mode
    assert library_lexical_index().count() == Passage.objects.filter(document=kept).count()
    assert list(Document.objects.all()) == [kept]
    assert not DocumentFile.objects.filter(document_id=document.pk).exists()


@pytest.mark.usefixtures("library_engines")
def test_a_document_deleted_while_it_was_being_indexed_leaves_nothing_in_the_legs(role_users, data_dir, monkeypatch):
    owner = role_users["researcher"]
    paper, record = _paper(data_dir, 3)
    document = document_upload(owner=owner, filename="a.xml", data=paper).document
    real_add = indexing.library_add

    def add_then_deleted(*args: object, **kwargs: object) -> int:
        chunks = real_add(*args, **kwargs)  # type: ignore[arg-type]
        Document.objects.filter(pk=document.pk).update(deleting=True)  # the owner deletes meanwhile
        indexing.document_unindex(document_id=document.pk)  # and the worker's other task runs at once
        return chunks

    monkeypatch.setattr(indexing, "library_add", add_then_deleted)
    indexing.document_index(document_id=document.pk)

    assert _search(str(record["QUESTION"]), owner, mode="lexical") == []
    assert library_lexical_index().count() == 0
    assert not Document.objects.exists()


def test_a_deletion_the_task_queue_cannot_take_changes_nothing_and_says_so(role_users, data_dir, broker_down):
    paper, _ = _paper(data_dir, 3)
    document = document_upload(owner=role_users["researcher"], filename="a.xml", data=paper).document

    with pytest.raises(DocumentRefusedError) as refusal:
        document_delete(document=document)

    assert refusal.value.http_status == 503
    assert "not deleted" in str(refusal.value)
    assert not Document.objects.get(pk=document.pk).deleting


def test_an_upload_the_task_queue_cannot_take_is_kept_and_says_it_is_not_searchable(
    role_users, data_dir, broker_down, researcher_client, django_capture_on_commit_callbacks
):
    paper, _ = _paper(data_dir, 3)

    with django_capture_on_commit_callbacks(execute=True):  # the indexing task is published once the upload commits
        document = document_upload(owner=role_users["researcher"], filename="a.xml", data=paper).document

    document.refresh_from_db()
    assert document.indexed_at is None
    assert "not searchable yet" in document.index_error
    page = researcher_client.get(f"/library/{document.pk}/").content.decode()
    assert "Index again" in page


@pytest.mark.usefixtures("library_engines")
def test_the_reindex_command_writes_every_document_into_empty_indexes(role_users, data_dir):
    owner = role_users["researcher"]
    paper, record = _paper(data_dir, 3)
    document = document_upload(owner=owner, filename="a.xml", data=paper).document  # its task never ran
    assert _search(str(record["QUESTION"]), owner, mode="lexical") == []

    out = StringIO()
    call_command("library_reindex", stdout=out)

    assert "1 documents indexed" in out.getvalue()
    assert {found for found, _ in _search(str(record["QUESTION"]), owner, mode="lexical")} == {document.pk}
    assert {found for found, _ in _search(str(record["QUESTION"]), owner, mode="semantic")} == {document.pk}


def test_the_library_collection_shares_a_qdrant_server_but_gets_a_local_mode_folder_of_its_own():
    # qdrant-client's local mode admits one client per folder, and the worker holds PubMed's open already.
    assert library_qdrant_location("http://qdrant:6333") == "http://qdrant:6333"
    assert library_qdrant_location(":memory:") == ":memory:"
    assert library_qdrant_location("/var/verimed/qdrant/") == "/var/verimed/qdrant-library"
