"""Questions asked across a researcher's library: the retrieve stage searches the asker's pages (never anyone
else's), the model is given a page's text under its DOC:<id>:p<page> id, the verifier judges a sentence citing it
against that text, and the answer shows the page to its asker alone. Real engines and the real MiniLM embedder and
verifier; the answer is written here rather than by the LLM (the stack tests run the model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from indexer.sentences import sentence_texts
from tests.indexer.jats_samples import jats_article, pqal_pmids, pqal_record
from webapp.library import indexing
from webapp.library.models import Document
from webapp.library.services import document_upload
from webapp.library.sources import library_pages
from webapp.qa.context import generation_context
from webapp.qa.library_sources import GONE_TITLE, WITHHELD_TITLE
from webapp.qa.models import Question
from webapp.qa.pipeline import RetrievalFilters, stored_pipeline
from webapp.qa.services import admission, retrieve, verify
from webapp.qa.sharing import question_share
from webapp.qa.verification import cited_abstracts

pytestmark = [pytest.mark.django_db, pytest.mark.model, pytest.mark.usefixtures("library_engines")]


def _indexed(owner: User, data_dir: Path, index: int = 3) -> tuple[Document, dict[str, object]]:
    pmid = pqal_pmids(data_dir)[index]
    record = pqal_record(data_dir, pmid)
    document = document_upload(owner=owner, filename="paper.xml", data=jats_article(record, pmid=pmid)).document
    indexing.document_index(document_id=document.pk)
    return document, record


def _asked(owner: User, text: str, sources: str) -> Question:
    question = admission.question_create(
        text=text,
        user=owner,
        enqueue=False,
        filters=RetrievalFilters(sources=sources),  # type: ignore[arg-type]
    )
    retrieve.question_retrieve(question_id=question.pk)
    return Question.objects.get(pk=question.pk)


def _retrieved(question: Question) -> list[str]:
    return list(question.retrieved.order_by("rank").values_list("pmid", flat=True))


def test_the_library_search_finds_pages_of_the_askers_papers_and_never_anyone_elses(
    library_engines, indexed_articles, role_users, data_dir
):
    owner, other = role_users["researcher"], role_users["reviewer"]
    mine, record = _indexed(owner, data_dir)
    theirs, _ = _indexed(other, data_dir)  # the very same paper, in another library
    text = str(record["QUESTION"])

    library_only = _retrieved(_asked(owner, text, "library"))
    both = _retrieved(_asked(owner, text, "both"))
    pubmed = _retrieved(_asked(owner, text, "pubmed"))

    assert library_only
    assert all(pmid.startswith(f"DOC:{mine.pk}:p") for pmid in library_only)
    assert not [pmid for pmid in both if pmid.startswith(f"DOC:{theirs.pk}:")]
    assert {pmid for pmid in both if pmid.startswith("DOC:")} <= set(library_only)
    assert both[:2] == [pubmed[0], library_only[0]]  # the two searches take turns, each in its own order
    assert not [pmid for pmid in pubmed if pmid.startswith("DOC:")]


def test_the_model_is_given_a_pages_text_and_only_its_asker_can_have_it_read(
    library_engines, indexed_articles, role_users, data_dir
):
    owner, other = role_users["researcher"], role_users["reviewer"]
    _document, record = _indexed(owner, data_dir)
    question = _asked(owner, str(record["QUESTION"]), "library")
    first = _retrieved(question)[0]
    page = library_pages(source_ids=[first], owner_id=owner.pk)[first]

    context = generation_context(question, stored_pipeline(question))

    given = {item.pmid: item for item in context}
    assert given[first].title == page.title
    assert set(sentence_texts(given[first].abstract)) <= set(sentence_texts(page.text))  # focused on the question
    assert cited_abstracts(pmids=[first], owner_id=owner.pk)[first].abstract == page.text
    assert cited_abstracts(pmids=[first], owner_id=other.pk) == {}
    assert cited_abstracts(pmids=[first]) == {}


def test_a_sentence_citing_a_page_is_verified_against_it_and_shown_to_the_asker_alone(
    library_engines, indexed_articles, role_users, data_dir, researcher_client: Client, reviewer_client: Client
):
    owner = role_users["researcher"]
    document, record = _indexed(owner, data_dir)
    question = _asked(owner, str(record["QUESTION"]), "library")
    cited = _retrieved(question)[0]
    page = library_pages(source_ids=[cited], owner_id=owner.pk)[cited]
    claim = sentence_texts(page.text)[1]
    Question.objects.filter(pk=question.pk).update(
        answer_text=f"{claim.rstrip('.')} ({cited}).", context={"given": [cited]}, status=Question.Status.GENERATING
    )

    verify.question_verify(question_id=question.pk)

    verdict = Question.objects.get(pk=question.pk).sentences.get().citations.get()
    assert verdict.pmid == cited
    assert verdict.label != "NO_REFERENCE"
    assert verdict.evidence_sentences  # the extractor found evidence in the page
    own = researcher_client.get(f"/questions/{question.pk}.json").json()
    shown = own["sentences"][0]["verdicts"][cited]
    assert shown["evidence_text"]
    assert all(sentence in page.text for sentence in shown["evidence_text"])
    assert own["retrieved"][0]["source"]["title"] == page.title
    assert own["retrieved"][0]["source"]["url"].startswith(f"/library/{document.pk}/view?page=")
    dialog = researcher_client.get(f"/articles/{cited}.json")
    assert dialog.status_code == 200
    assert dialog.json()["abstract"] == page.text

    # A reviewer reads every answer, but not the asker's library: the citation stays, its text does not.
    theirs = reviewer_client.get(f"/questions/{question.pk}.json").json()
    assert theirs["retrieved"][0]["source"]["title"] == WITHHELD_TITLE
    assert theirs["sentences"][0]["verdicts"][cited]["evidence_text"] == []
    # (the answer's own sentence came from the page; the rest of the page is not shown)
    unshown = [sentence for sentence in sentence_texts(page.text) if sentence != claim and len(sentence) > 40]
    assert unshown
    assert all(sentence in json.dumps(dialog.json(), ensure_ascii=False) for sentence in unshown)  # the check sees
    assert not [sentence for sentence in unshown if sentence in json.dumps(theirs, ensure_ascii=False)]
    assert reviewer_client.get(f"/articles/{cited}.json").status_code == 404
    token = question_share(question_id=question.pk).share_token
    shared = reviewer_client.get(f"/shared/{token}.json").json()
    assert shared["retrieved"][0]["source"]["title"] == WITHHELD_TITLE
    assert not [sentence for sentence in unshown if sentence in json.dumps(shared, ensure_ascii=False)]
    export = researcher_client.get(f"/questions/{question.pk}/export.md").content.decode()
    assert f"cites {cited}, in the asker's own library" in export
    assert page.text[:60] not in export

    indexing.document_unindex(document_id=document.pk)  # the asker deletes the paper: the answer says so
    gone = researcher_client.get(f"/questions/{question.pk}.json").json()
    assert gone["retrieved"][0]["source"]["title"] == GONE_TITLE
    assert researcher_client.get(f"/articles/{cited}.json").status_code == 404
