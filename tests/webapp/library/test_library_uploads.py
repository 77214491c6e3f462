"""Adding papers to a researcher's library: what is stored, what is refused (leaving no trace), the limits, deleting,
and the pages that do it. The papers are JATS articles made from real PQA-L records (tests/indexer/jats_samples.py);
the PDF reader has its own tests (tests/indexer/test_pdf_text.py)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from tests.indexer.jats_samples import PMID, jats_article, pqal_pmids, pqal_record
from tests.indexer.pdf_samples import (
    Block,
    Layout,
    encrypted,
    flate_bomb,
    library_papers,
    paper_blocks,
    pqal_records,
    pubmed_citations,
    scanned_text_page,
    typeset,
)
from webapp.corpus.models import Article
from webapp.library.models import Document, DocumentFile, Passage
from webapp.library.services import DocumentRefusedError, document_upload
from webapp.library.sources import library_pages

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(role_users: dict[str, User]) -> User:
    return role_users["researcher"]


@pytest.fixture
def paper(data_dir: Path) -> bytes:
    return jats_article(pqal_record(data_dir))


def _other_paper(data_dir: Path, index: int = 1) -> bytes:
    pmid = pqal_pmids(data_dir)[index]
    return jats_article(pqal_record(data_dir, pmid), pmid=pmid)


def _nothing_stored() -> bool:
    return not (Document.objects.exists() or DocumentFile.objects.exists() or Passage.objects.exists())


def test_a_jats_paper_is_stored_with_its_identifiers_file_and_sectioned_passages(owner, paper, data_dir):
    upload = document_upload(owner=owner, filename="C:\\papers\\21645374.xml", data=paper)

    document = upload.document
    assert upload.created
    assert (document.kind, document.filename, document.pmid, document.pmcid) == (
        "jats",
        "21645374.xml",
        PMID,
        "PMC3123456",
    )
    assert document.doi == f"10.1000/example.{PMID}"
    assert document.pages is None
    assert bytes(DocumentFile.objects.get(document=document).data) == paper
    passages = list(Passage.objects.filter(document=document))
    record = pqal_record(data_dir)
    labels = [str(label).title() for label in record["LABELS"]]  # type: ignore[attr-defined]
    assert [passages[0].section, *dict.fromkeys(p.section for p in passages[1:])] == ["Abstract", *labels]
    assert [passage.ordinal for passage in passages] == list(range(len(passages)))
    assert all(passage.page is None for passage in passages)


def test_the_same_file_uploaded_again_is_the_same_document(owner, paper, role_users):
    first = document_upload(owner=owner, filename="a.xml", data=paper)
    again = document_upload(owner=owner, filename="renamed.xml", data=paper)
    someone_else = document_upload(owner=role_users["reviewer"], filename="a.xml", data=paper)

    assert not again.created
    assert again.document.pk == first.document.pk
    assert someone_else.created
    assert someone_else.document.pk != first.document.pk
    assert Document.objects.count() == 2


def test_a_paper_the_pubmed_index_holds_is_linked_to_its_record(owner, paper):
    article = Article.objects.create(pmid=PMID, title="Indexed", abstract="An abstract.")

    document = document_upload(owner=owner, filename="a.xml", data=paper).document

    assert document.article == article
    assert Article.objects.count() == 1


def _zip_named_pdf() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("paper.txt", "not a paper")
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("name", "make", "reason"),
    [
        ("paper.pdf", lambda paper: _zip_named_pdf(), "neither a PDF nor JATS XML (its contents are a zip archive"),
        ("paper.xml", lambda paper: paper[: len(paper) // 2], "not well-formed XML"),
        ("paper.xml", lambda paper: b"", "the file is empty"),
        (
            "bomb.xml",
            lambda paper: b'<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x "xx">]><article>&x;</article>',
            "declares XML entities",
        ),
        ("page.html", lambda paper: b"<html><body>Hello</body></html>", "not a JATS <article>"),
    ],
)
def test_a_file_that_is_not_a_readable_paper_is_refused_with_its_reason_and_leaves_no_trace(
    owner, paper, name, make, reason
):
    with pytest.raises(DocumentRefusedError) as refusal:
        document_upload(owner=owner, filename=name, data=make(paper))

    assert str(refusal.value).startswith(f"{name}: ")
    assert reason in str(refusal.value)
    assert refusal.value.http_status == 400
    assert _nothing_stored()


def test_a_failure_while_storing_leaves_no_half_stored_document(owner, paper, monkeypatch):
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the database went away")

    monkeypatch.setattr(Passage.objects, "bulk_create", broken)

    with pytest.raises(RuntimeError):
        document_upload(owner=owner, filename="a.xml", data=paper)

    assert _nothing_stored()


def test_the_file_size_and_library_limits_refuse_with_their_own_status(owner, paper, data_dir, monkeypatch):
    original = settings.VERIMED
    monkeypatch.setattr(settings, "VERIMED", settings.VERIMED.replace(VERIMED_LIBRARY_FILE_MAX_BYTES=len(paper) - 1))
    with pytest.raises(DocumentRefusedError) as too_big:
        document_upload(owner=owner, filename="a.xml", data=paper)
    assert too_big.value.http_status == 413
    assert (
        str(too_big.value)
        == f"a.xml: the file is {len(paper):,} bytes; a paper may be at most {len(paper) - 1:,} bytes"
    )

    monkeypatch.setattr(settings, "VERIMED", original.replace(VERIMED_LIBRARY_MAX_DOCUMENTS=1))
    document_upload(owner=owner, filename="a.xml", data=paper)
    with pytest.raises(DocumentRefusedError) as full:
        document_upload(owner=owner, filename="b.xml", data=_other_paper(data_dir))
    assert full.value.http_status == 403
    assert "holds 1 documents" in str(full.value)

    monkeypatch.setattr(
        settings,
        "VERIMED",
        original.replace(VERIMED_LIBRARY_MAX_DOCUMENTS=0, VERIMED_LIBRARY_MAX_BYTES=len(paper) + 10),
    )
    with pytest.raises(DocumentRefusedError) as no_room:
        document_upload(owner=owner, filename="b.xml", data=_other_paper(data_dir))
    assert no_room.value.http_status == 403
    assert Document.objects.count() == 1


def test_the_page_uploads_many_files_at_once_and_reports_each(researcher_client: Client, owner, paper, data_dir):
    files = [
        SimpleUploadedFile("good.xml", paper, content_type="application/xml"),
        SimpleUploadedFile("fake.pdf", _zip_named_pdf(), content_type="application/pdf"),
        SimpleUploadedFile("second.xml", _other_paper(data_dir), content_type="text/xml"),
    ]

    response = researcher_client.post("/library/upload", {"file": files}, follow=True)

    shown = [str(message) for message in response.context["messages"]]
    assert shown[0] == "good.xml: added to your library."
    assert shown[1].startswith("fake.pdf: this is neither a PDF nor JATS XML")
    assert shown[2] == "second.xml: added to your library."
    assert Document.objects.filter(owner=owner).count() == 2
    page = response.content.decode()
    assert 'id="library-documents"' in page
    assert "good.xml" in page
    assert "second.xml" in page
    assert "fake.pdf" not in page.split('id="library-documents"')[1]


def test_the_pages_script_gets_each_files_outcome_as_json(researcher_client: Client, owner, paper):
    added = researcher_client.post(
        "/library/upload", {"file": SimpleUploadedFile("a.xml", paper)}, HTTP_ACCEPT="application/json"
    )
    again = researcher_client.post(
        "/library/upload", {"file": SimpleUploadedFile("b.xml", paper)}, HTTP_ACCEPT="application/json"
    )
    refused = researcher_client.post(
        "/library/upload", {"file": SimpleUploadedFile("c.pdf", b"MZ\x90\x00")}, HTTP_ACCEPT="application/json"
    )

    document = Document.objects.get(owner=owner)
    assert added.status_code == 201
    assert added.json()["results"] == [
        {"filename": "a.xml", "outcome": "added", "detail": None, "url": f"/library/{document.pk}/"}
    ]
    assert again.status_code == 200
    assert again.json()["results"][0]["outcome"] == "already in your library"
    assert refused.status_code == 400
    assert refused.json()["results"][0]["detail"] == (
        "c.pdf: this is neither a PDF nor JATS XML (its contents are a program); upload a PDF or a JATS .xml file"
    )


def test_a_document_page_shows_its_passages_escaped_and_its_file_is_served_sandboxed(
    researcher_client: Client, owner, paper
):
    hostile = paper.replace(b"<title>", b"<title>&lt;script&gt;alert(1)&lt;/script&gt; ", 1)
    document = document_upload(owner=owner, filename="a.xml", data=hostile).document

    page = researcher_client.get(f"/library/{document.pk}/").content.decode()
    file = researcher_client.get(f"/library/{document.pk}/file")

    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>alert(1)" not in page
    assert f"DOC:{document.pk}:p&lt;page&gt;" in page
    assert file.content == hostile
    assert file["Content-Security-Policy"] == "sandbox"
    assert file["X-Content-Type-Options"] == "nosniff"
    assert file["Content-Disposition"].startswith("attachment;")  # XML is downloaded, never rendered by the site


def test_only_the_owner_reaches_a_document_through_any_page(
    owner, paper, role_users, researcher_client, reviewer_client, site_admin_client
):
    document = document_upload(owner=owner, filename="a.xml", data=paper).document
    routes = [f"/library/{document.pk}/", f"/library/{document.pk}/file"]

    for client in (reviewer_client, site_admin_client):
        assert [client.get(route).status_code for route in routes] == [404, 404]
        assert client.post(f"/library/{document.pk}/delete").status_code == 404
        assert "a.xml" not in client.get("/library/").content.decode()
    assert Document.objects.filter(pk=document.pk).exists()
    assert [researcher_client.get(route).status_code for route in routes] == [200, 200]
    assert researcher_client.post(f"/library/{document.pk}/delete").status_code == 302
    assert Document.objects.get(pk=document.pk).deleting  # its removal from the indexes is queued
    assert [researcher_client.get(route).status_code for route in routes] == [404, 404]


def test_a_two_column_pdf_is_stored_with_its_pages_and_each_passage_knows_its_page(owner, data_dir):
    records = pqal_records(data_dir)[:6]
    paper = typeset(
        paper_blocks(records, pubmed_citations(data_dir)[:12]),
        Layout("two-column", columns=2, running_header="J Test Med 2026;1:1-9", body_size=9.0),
    )
    Article.objects.create(pmid=records[0][0], title="Indexed", abstract="An abstract.")

    document = document_upload(owner=owner, filename="paper.pdf", data=paper.pdf).document

    assert (document.kind, document.pages) == ("pdf", paper.pages)
    assert document.pmid == records[0][0]
    assert document.article is not None  # the labelled PMID links the PubMed record the index holds
    passages = list(Passage.objects.filter(document=document))
    assert passages[0].section == "Abstract"
    pages = {passage.page for passage in passages}
    assert {1, 2} <= pages <= set(range(1, paper.pages + 1))  # the last page may hold only the dropped references
    assert all("J Test Med" not in passage.text for passage in passages)  # the running header is not text
    body = " ".join(passage.text for passage in passages)
    assert " ".join(str(records[1][1]["CONTEXTS"][0]).split()[:12]) in body  # type: ignore[index]


def test_a_jats_documents_view_is_its_page_at_the_passage(researcher_client: Client, owner, paper):
    document = document_upload(owner=owner, filename="a.xml", data=paper).document

    response = researcher_client.get(f"/library/{document.pk}/view?passage=2")

    assert response.status_code == 302
    assert response["Location"] == f"/library/{document.pk}/#passage-2"
    page = researcher_client.get(f"/library/{document.pk}/").content.decode()
    assert 'id="passage-2"' in page  # what the anchor lands on, highlighted by :target


def test_a_file_name_is_stored_and_reported_without_its_path_or_control_characters(owner, paper):
    upload = document_upload(owner=owner, filename="C:\\Users\\me\\pa\x1bper\u200b.xml", data=paper)

    assert upload.document.filename == "paper.xml"
    with pytest.raises(DocumentRefusedError) as refusal:
        document_upload(owner=owner, filename="../../etc/x\x00y.pdf", data=b"MZ")
    assert str(refusal.value).startswith("xy.pdf: ")


@pytest.fixture(scope="module")
def pdf_blocks(data_dir: Path) -> list[Block]:
    return paper_blocks(pqal_records(data_dir)[:6], pubmed_citations(data_dir)[:12])


@pytest.mark.parametrize(
    ("hostile", "reason"),
    [
        (lambda blocks: encrypted(blocks, user_password="secret"), "needs a password"),
        (lambda blocks: typeset(blocks, Layout("one-column")).pdf[:-4000], "incomplete"),
        (lambda blocks: flate_bomb("Hello bomb", megabytes=640), "decompression bomb"),
        (lambda blocks: b"%PDF-1.7\n" + b"\x00not an object\n" * 200 + b"%%EOF\n", "damaged"),
        (lambda blocks: b"<!DOCTYPE html><html><body>Sign in to read this PDF</body></html>", "not a JATS <article>"),
    ],
    ids=["encrypted", "truncated", "bomb", "damaged", "html-named-pdf"],
)
def test_a_hostile_pdf_is_refused_through_the_upload_and_leaves_no_trace(owner, pdf_blocks, hostile, reason):
    with pytest.raises(DocumentRefusedError) as refusal:
        document_upload(owner=owner, filename="paper.pdf", data=hostile(pdf_blocks))

    assert reason in str(refusal.value)
    assert _nothing_stored()


def test_a_scanned_pdf_is_read_by_ocr_and_its_passages_say_so(owner, researcher_client: Client, data_dir):
    text = " ".join(str(pqal_record(data_dir)["CONTEXTS"][0]).split())  # type: ignore[index]

    document = document_upload(owner=owner, filename="scan.pdf", data=scanned_text_page(text)).document

    passages = list(Passage.objects.filter(document=document))
    assert passages
    assert all(passage.ocr for passage in passages)
    assert "read by OCR from a scanned page" in researcher_client.get(f"/library/{document.pk}/").content.decode()


def test_a_cited_pdf_page_reads_as_the_passages_starting_on_it(owner, role_users, data_dir):
    name, paper = library_papers(data_dir, 1)[0]
    document = document_upload(owner=owner, filename=name, data=paper.pdf).document
    on_two = list(Passage.objects.filter(document=document, page=2).order_by("ordinal"))
    cited = f"DOC:{document.pk}:p2"

    pages = library_pages(source_ids=[cited, f"DOC:{document.pk}:p99", "12345678"], owner_id=owner.pk)

    assert list(pages) == [cited]
    assert pages[cited].text == " ".join(passage.text for passage in on_two)
    assert pages[cited].first_passage == on_two[0].ordinal
    assert library_pages(source_ids=[cited], owner_id=role_users["reviewer"].pk) == {}
