"""Sources whose id is not a PMID (the SciFact distractors' Semantic Scholar `S2:` ids) are shown as they are: no
PubMed link, no "PMID" label, on the page's JSON, the API, the exports and the review pages."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from webapp.accounts.roles import REVIEWER
from webapp.corpus.models import Article
from webapp.corpus.source_ids import is_pmid, pubmed_url, source_label
from webapp.qa.models import AnswerSentence, CitationVerdict, Question, RetrievedDocument
from webapp.review.services import flag_create

S2_ID = "S2:4983"


@pytest.fixture
def s2_question(db: None) -> Question:
    """An answer citing a PubMed abstract and a SciFact distractor, both retrieved and given to the model."""
    Article.objects.create(pmid="10000001", title="Metformin and lactic acidosis.", abstract="No acidosis occurred.")
    Article.objects.create(pmid=S2_ID, title="", abstract="Zinc shortened colds in adults.")
    question = Question.objects.create(
        text="Does zinc shorten colds?",
        status=Question.Status.DONE,
        verification_status=Question.Verification.VERIFIED,
        answer_text=f"Zinc shortened colds (PUBMED:{S2_ID}). Metformin is safe (PUBMED:10000001).",
        context={"given": [S2_ID, "10000001"]},
    )
    for rank, pmid in enumerate([S2_ID, "10000001"], start=1):
        RetrievedDocument.objects.create(
            question=question, rank=rank, pmid=pmid, score=1.0 / rank, lexical_score=1.0, semantic_score=0.5
        )
    for position, (pmid, text) in enumerate([(S2_ID, "Zinc shortened colds."), ("10000001", "Metformin is safe.")]):
        sentence = AnswerSentence.objects.create(
            question=question, position=position, text=text, display_text=text, verdict="SUPPORT", confidence=0.9
        )
        CitationVerdict.objects.create(sentence=sentence, position=0, pmid=pmid, label="SUPPORT", confidence=0.9)
    return question


def test_only_digits_make_a_pmid() -> None:
    assert is_pmid("10000001")
    assert not is_pmid(S2_ID)
    assert not is_pmid("١٢٣")  # digits, but not ASCII ones
    assert source_label("10000001") == "PMID 10000001"
    assert source_label(S2_ID) == S2_ID
    assert pubmed_url("10000001") == "https://pubmed.ncbi.nlm.nih.gov/10000001/"
    assert pubmed_url(S2_ID) == ""


def test_the_page_json_and_the_api_give_no_pubmed_link_for_an_s2_source(
    s2_question: Question, site_admin_client: Client
) -> None:
    payload = site_admin_client.get(f"/questions/{s2_question.pk}.json").json()
    sources = {doc["pmid"]: doc["source"] for doc in payload["retrieved"]}
    assert sources[S2_ID]["url"] == ""
    assert sources["10000001"]["url"] == "https://pubmed.ncbi.nlm.nih.gov/10000001/"
    api = site_admin_client.get(f"/api/v1/questions/{s2_question.pk}").json()
    assert {doc["pmid"]: doc["source"]["url"] for doc in api["retrieved"]}[S2_ID] == ""
    article = site_admin_client.get(f"/api/v1/articles/{S2_ID}").json()
    assert article["url"] == ""


def test_the_exports_call_an_s2_source_what_it_is(s2_question: Question, site_admin_client: Client) -> None:
    markdown = site_admin_client.get(f"/questions/{s2_question.pk}/export.md").content.decode()
    bibtex = site_admin_client.get(f"/questions/{s2_question.pk}/references.bib").content.decode()
    ris = site_admin_client.get(f"/questions/{s2_question.pk}/references.ris").content.decode()

    first, second = (line for line in markdown.splitlines() if line.startswith(("1. ", "2. ")))
    assert first == "1. S2:4983. S2:4983 (not a PubMed record)."
    assert second.endswith("PubMed: <https://pubmed.ncbi.nlm.nih.gov/10000001/>")
    s2_entry, pubmed_entry = bibtex.split("@article")[1:]
    assert "pmid =" not in s2_entry
    assert "url =" not in s2_entry
    assert "pmid = {10000001}" in pubmed_entry
    s2_record, pubmed_record = ris.split("ER  -")[:2]
    assert "DB  - PubMed" not in s2_record
    assert "UR  -" not in s2_record
    assert "DB  - PubMed" in pubmed_record


def test_the_review_pages_label_an_s2_source_without_calling_it_a_pmid(
    s2_question: Question, role_users: dict[str, User], reviewer_client: Client
) -> None:
    flag = flag_create(
        question=s2_question, sentence_position=0, reason="unsupported", pmid=S2_ID, user=role_users[REVIEWER]
    )

    queue = reviewer_client.get("/review/").content.decode()
    page = reviewer_client.get(f"/review/flags/{flag.pk}/").content.decode()

    assert f"({S2_ID})" in queue
    assert f"PMID {S2_ID}" not in queue + page
    assert "not a PubMed record" in page
    assert "pubmed.ncbi.nlm.nih.gov/S2" not in page
