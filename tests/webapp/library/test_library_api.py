"""The library through the API: upload one file or many, list, read with passages, delete; nobody else's documents."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.indexer.jats_samples import PMID, jats_article, pqal_pmids, pqal_record
from webapp.library.models import Document
from webapp.qa.models import Question

pytestmark = pytest.mark.django_db


def _api(user: User) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def papers(data_dir: Path) -> list[bytes]:
    pmids = [PMID, pqal_pmids(data_dir)[1]]
    return [jats_article(pqal_record(data_dir, pmid), pmid=pmid) for pmid in pmids]


def test_uploading_many_files_reports_each_and_adds_the_readable_ones(role_users, papers):
    api = _api(role_users["researcher"])
    files = [
        SimpleUploadedFile("one.xml", papers[0]),
        SimpleUploadedFile("scan.pdf", b"\x89PNG\r\n\x1a\n"),
        SimpleUploadedFile("two.xml", papers[1]),
    ]

    response = api.post("/api/v1/documents", {"file": files}, format="multipart")

    assert response.status_code == 201
    results = response.json()["results"]
    assert [(result["filename"], result["outcome"], result["status"]) for result in results] == [
        ("one.xml", "added", 201),
        ("scan.pdf", "refused", 400),
        ("two.xml", "added", 201),
    ]
    assert results[1]["detail"].startswith("scan.pdf: this is neither a PDF nor JATS XML (its contents are a PNG")
    assert results[1]["document"] is None
    assert results[0]["document"]["pmid"] == PMID
    assert results[0]["document"]["citation"] == f"DOC:{results[0]['document']['id']}"
    assert Document.objects.count() == 2


def test_a_single_refused_file_answers_with_its_refusals_status(role_users, papers):
    api = _api(role_users["researcher"])

    response = api.post("/api/v1/documents", {"file": SimpleUploadedFile("x.pdf", b"")}, format="multipart")

    assert response.status_code == 400
    assert response.json()["detail"] == "x.pdf: the file is empty"
    assert not Document.objects.exists()


def test_the_owner_lists_reads_and_deletes_and_nobody_else_sees_a_thing(role_users, papers):
    owner = _api(role_users["researcher"])
    created = owner.post("/api/v1/documents", {"file": SimpleUploadedFile("one.xml", papers[0])}, format="multipart")
    document_id = created.json()["results"][0]["document"]["id"]

    listed = owner.get("/api/v1/documents").json()
    detail = owner.get(f"/api/v1/documents/{document_id}").json()

    assert [document["id"] for document in listed["results"]] == [document_id]
    assert detail["passages"][0]["section"] == "Abstract"
    assert [passage["ordinal"] for passage in detail["passages"]] == list(range(len(detail["passages"])))
    for role in ("reviewer", "admin"):
        other = _api(role_users[role])
        assert other.get("/api/v1/documents").json()["results"] == []
        assert other.get(f"/api/v1/documents/{document_id}").status_code == 404
        assert other.delete(f"/api/v1/documents/{document_id}").status_code == 404
    assert owner.delete(f"/api/v1/documents/{document_id}").status_code == 204
    assert owner.get(f"/api/v1/documents/{document_id}").status_code == 404
    assert owner.get("/api/v1/documents").json()["results"] == []
    assert Document.objects.get().deleting  # the worker takes it out of the indexes, then the database


def test_a_question_asked_through_the_api_may_search_the_library(role_users):
    api = _api(role_users["researcher"])

    asked = api.post("/api/v1/questions", {"question": "Does my trial say so?", "sources": "both"}, format="json")
    refused = api.post("/api/v1/questions", {"question": "Does it?", "sources": "everywhere"}, format="json")

    assert asked.status_code == 201
    assert Question.objects.get(pk=asked.json()["id"]).settings["filters"]["sources"] == "both"
    assert refused.status_code == 400
    assert list(refused.json()) == ["sources"]
