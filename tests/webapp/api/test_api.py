"""The JSON API under /api/v1/: token auth, roles, who sees which question and flag, validation messages."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.webapp.factories import (
    UNCLEAR_PROBABILITIES,
    UNCLEAR_RAW_PROBABILITIES,
    article_retracted,
    unclear_sentence,
)
from webapp.accounts.roles import ADMIN, RESEARCHER, REVIEWER
from webapp.corpus.models import Article
from webapp.qa import selectors
from webapp.qa.models import AnswerSentence, CitationVerdict, Question, RetrievedDocument
from webapp.qa.pipeline import default_pipeline_settings
from webapp.review.models import Flag
from webapp.watch.selectors import question_watch_payload

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-test-password"  # what the role_users fixture gives everyone


def _token_client(user: User) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def other_researcher(role_users: dict[str, User]) -> User:
    call_command("user_create", "other-researcher", "--role", RESEARCHER, "--password", PASSWORD, stdout=StringIO())
    return User.objects.get(username="other-researcher")


@pytest.fixture
def researcher(role_users: dict[str, User]) -> APIClient:
    return _token_client(role_users[RESEARCHER])


@pytest.fixture
def other(other_researcher: User) -> APIClient:
    return _token_client(other_researcher)


@pytest.fixture
def reviewer(role_users: dict[str, User]) -> APIClient:
    return _token_client(role_users[REVIEWER])


@pytest.fixture
def admin(role_users: dict[str, User]) -> APIClient:
    return _token_client(role_users[ADMIN])


@pytest.fixture
def answered(role_users: dict[str, User]) -> Question:
    """A finished answer of the researcher's: one supported sentence citing PMID 123, one citing an unknown PMID."""
    Article.objects.create(
        pmid="123",
        title="Metformin and lactic acidosis.",
        abstract="We followed 5,000 patients. No cases of lactic acidosis occurred. HbA1c fell.",
        journal="Diabetes Care",
        year=2010,
        authors=["A Author"],
    )
    question = Question.objects.create(
        text="Does metformin cause lactic acidosis?",
        user=role_users[RESEARCHER],
        status=Question.Status.DONE,
        answer_text="No (PUBMED:123). Maybe (PUBMED:999).",
    )
    RetrievedDocument.objects.create(
        question=question, rank=1, pmid="123", score=0.9, lexical_score=1.0, semantic_score=0.6, lexical_raw=7.5
    )
    first = AnswerSentence.objects.create(
        question=question, position=0, text="No (PUBMED:123).", display_text="No.", verdict="SUPPORT", confidence=0.93
    )
    CitationVerdict.objects.create(
        sentence=first,
        position=0,
        pmid="123",
        label="SUPPORT",
        confidence=0.93,
        evidence_sentences=[1],
        evidence_spans=[[28, 64]],
    )
    second = AnswerSentence.objects.create(
        question=question, position=1, text="Maybe (PUBMED:999).", display_text="Maybe.", verdict="NO_REFERENCE"
    )
    CitationVerdict.objects.create(sentence=second, position=0, pmid="999", label="NO_REFERENCE")
    return question


def _ask(client: APIClient, **body: object) -> Question:
    response = client.post("/api/v1/questions", {"question": "Is aspirin cardioprotective?", **body}, format="json")
    assert response.status_code == 201, response.json()
    return Question.objects.get(pk=response.json()["id"])


# --- authentication and roles

ENDPOINTS = [
    ("get", "/api/v1/questions"),
    ("post", "/api/v1/questions"),
    ("get", "/api/v1/questions/1"),
    ("post", "/api/v1/questions/1/cancel"),
    ("get", "/api/v1/articles/123"),
    ("get", "/api/v1/flags"),
    ("post", "/api/v1/flags"),
    ("get", "/api/v1/flags/1"),
]


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_every_endpoint_answers_anonymous_callers_with_401(client: Client, method: str, path: str) -> None:
    response = getattr(client, method)(path)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_a_bad_token_is_401(method: str, path: str) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert getattr(client, method)(path).status_code == 401


def test_a_signed_in_user_without_a_role_is_403(db: None) -> None:
    nobody = User.objects.create_user("nobody", password=PASSWORD)
    response = _token_client(nobody).get("/api/v1/questions")
    assert response.status_code == 403
    assert "researcher role" in response.json()["detail"]


def test_the_token_exchange_gives_a_token_that_authenticates(role_users: dict[str, User]) -> None:
    anonymous = APIClient()
    response = anonymous.post(
        "/api/v1/auth/token", {"username": "researcher-user", "password": PASSWORD}, format="json"
    )
    assert response.status_code == 200
    key = response.json()["token"]
    assert Token.objects.get(key=key).user == role_users[RESEARCHER]
    anonymous.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert anonymous.get("/api/v1/questions").status_code == 200


def test_the_token_exchange_rejects_a_wrong_password(role_users: dict[str, User]) -> None:
    response = APIClient().post(
        "/api/v1/auth/token", {"username": "researcher-user", "password": "wrong"}, format="json"
    )
    assert response.status_code == 400
    assert not Token.objects.exists()


def test_the_api_token_command_prints_one_stable_token(role_users: dict[str, User]) -> None:
    first, second = StringIO(), StringIO()
    call_command("api_token", "reviewer-user", stdout=first)
    call_command("api_token", "reviewer-user", stdout=second)
    assert first.getvalue() == second.getvalue()
    assert Token.objects.get(user=role_users[REVIEWER]).key == first.getvalue().strip()


def test_the_api_token_command_refuses_an_unknown_user(db: None) -> None:
    with pytest.raises(CommandError, match="no user named"):
        call_command("api_token", "ghost", stdout=StringIO())


def test_the_sites_session_sign_in_works_for_the_api_too(researcher_client: Client, answered: Question) -> None:
    assert researcher_client.get(f"/api/v1/questions/{answered.pk}").status_code == 200


# --- asking


def test_a_researcher_asks_with_their_own_settings(researcher: APIClient, role_users: dict[str, User]) -> None:
    response = researcher.post(
        "/api/v1/questions",
        {
            "question": "  Is aspirin cardioprotective?  ",
            "mode": "lexical",
            "top_k": 7,
            "lexical_weight": 0.5,
            "semantic_weight": 0.5,
            "fusion": "rrf",
            "year_from": 2000,
            "year_to": 2020,
            "journals": ["Lancet"],
            "publication_types": ["Review"],
            "mesh": ["Aspirin"],
            "prefer_stronger_designs": True,
        },
        format="json",
    )
    assert response.status_code == 201
    body = response.json()
    question = Question.objects.get(pk=body["id"])
    assert question.user == role_users[RESEARCHER]
    assert question.text == "Is aspirin cardioprotective?"
    assert body["status"] == "queued"
    assert body["url"] == f"http://testserver/api/v1/questions/{question.pk}"
    assert body["page_url"] == f"http://testserver/questions/{question.pk}/"
    retrieval = question.settings["retrieval"]
    assert (retrieval["mode"], retrieval["top_k"], retrieval["fusion"]) == ("lexical", 7, "rrf")
    assert (retrieval["lexical_weight"], retrieval["semantic_weight"]) == (0.5, 0.5)
    assert question.settings["filters"] == {
        "year_from": 2000,
        "year_to": 2020,
        "journals": ["Lancet"],
        "publication_types": ["Review"],
        "mesh": ["Aspirin"],
        "sources": "pubmed",
        "include_retracted": False,
        "prefer_stronger_designs": True,
    }


def test_a_question_without_settings_gets_the_sites_defaults(researcher: APIClient) -> None:
    question = _ask(researcher)
    assert question.settings == default_pipeline_settings().model_dump(mode="json")


def test_settings_not_given_keep_their_defaults(researcher: APIClient) -> None:
    question = _ask(researcher, top_k=15, year_from=2015)
    assert question.settings["retrieval"]["top_k"] == 15
    assert question.settings["retrieval"]["lexical_weight"] == 0.7
    assert question.settings["filters"]["year_from"] == 2015
    assert question.settings["filters"]["year_to"] is None


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"question": "   "}, "question", "Please type a question."),
        ({"question": "x" * 2001}, "question", "limited to 2,000 characters"),
        ({"year_from": 2020, "year_to": 2010}, "year_to", "year_from is after year_to"),
        ({"lexical_weight": 0, "semantic_weight": 0}, "lexical_weight", "at least one leg needs a positive weight"),
        ({"lexical_weight": 1.5}, "lexical_weight", "less than or equal to 1"),
        ({"top_k": 3}, "top_k", "greater than or equal to 5"),
        ({"top_k": 21}, "top_k", "less than or equal to 20"),
        ({"mode": "fuzzy"}, "mode", "not a valid choice"),
        ({"year_from": 1500}, "year_from", "greater than or equal to 1800"),
        ({"journals": "Lancet"}, "journals", "list"),
    ],
)
def test_invalid_questions_are_400_with_field_messages(
    researcher: APIClient, body: dict[str, object], field: str, message: str
) -> None:
    response = researcher.post("/api/v1/questions", {"question": "Is aspirin cardioprotective?", **body}, format="json")
    assert response.status_code == 400
    assert any(message in text for text in response.json()[field]), response.json()
    assert not Question.objects.exists()


def test_a_question_is_required(researcher: APIClient) -> None:
    response = researcher.post("/api/v1/questions", {"top_k": 5}, format="json")
    assert response.status_code == 400
    assert response.json()["question"] == ["This field is required."]


# --- reading questions


def test_researchers_see_their_own_questions_and_not_others(
    researcher: APIClient, other: APIClient, answered: Question
) -> None:
    theirs = _ask(other)
    listed = researcher.get("/api/v1/questions").json()
    assert [item["id"] for item in listed["results"]] == [answered.pk]
    assert listed["results"][0]["asked_by"] == "researcher-user"
    assert researcher.get(f"/api/v1/questions/{theirs.pk}").status_code == 404
    # `all` is for reviewers; a researcher asking for it still sees only their own.
    assert [item["id"] for item in researcher.get("/api/v1/questions?all=1").json()["results"]] == [answered.pk]


def test_reviewers_see_everyones_questions_with_all(reviewer: APIClient, other: APIClient, answered: Question) -> None:
    theirs = _ask(other)
    assert reviewer.get("/api/v1/questions").json()["count"] == 0  # their own: none
    everyone = reviewer.get("/api/v1/questions", {"all": "1"}).json()
    assert [item["id"] for item in everyone["results"]] == [theirs.pk, answered.pk]  # newest first
    assert reviewer.get(f"/api/v1/questions/{answered.pk}").status_code == 200


def test_the_list_filters_by_status_and_paginates(researcher: APIClient, answered: Question) -> None:
    queued = [_ask(researcher), _ask(researcher)]
    done = researcher.get("/api/v1/questions", {"status": "done"}).json()
    assert [item["id"] for item in done["results"]] == [answered.pk]
    page = researcher.get("/api/v1/questions", {"limit": 1}).json()
    assert page["count"] == 3
    assert [item["id"] for item in page["results"]] == [queued[-1].pk]
    assert "offset=1" in page["next"]
    assert researcher.get("/api/v1/questions", {"status": "pondering"}).status_code == 400


def test_the_list_searches_questions_and_answers(researcher: APIClient, answered: Question) -> None:
    _ask(researcher)
    found = researcher.get("/api/v1/questions", {"search": "METFORMIN"}).json()
    assert [item["id"] for item in found["results"]] == [answered.pk]


def test_the_detail_is_the_pages_question_payload(researcher: APIClient, answered: Question) -> None:
    body = researcher.get(f"/api/v1/questions/{answered.pk}").json()
    question = selectors.question_get(question_id=answered.pk)
    watch = question_watch_payload(question=question, user=answered.user)
    assert body == {**selectors.question_payload(question), **watch}
    assert watch == {"watched": False, "rechecks": []}
    assert body["sentences"][0]["verdicts"]["123"] == {
        "label": "SUPPORT",
        "confidence": 0.93,
        "leaning": None,  # a row from before leanings and probabilities were stored
        "raw_label": None,
        "probabilities": {},
        "raw_probabilities": {},
        "evidence_sentences": [1],
        "evidence_spans": [[28, 64]],
        "evidence_text": ["No cases of lactic acidosis occurred."],
    }
    assert body["retrieved"][0]["source"]["journal"] == "Diabetes Care"


def test_an_unclear_citation_shows_its_leaning_and_both_sets_of_probabilities(
    researcher: APIClient, answered: Question
) -> None:
    unclear_sentence(question=answered, position=2, pmid="123")
    sentence = researcher.get(f"/api/v1/questions/{answered.pk}").json()["sentences"][2]
    assert (sentence["verdict"], sentence["confidence"]) == ("UNCLEAR", 0.48)
    verdict = sentence["verdicts"]["123"]
    assert (verdict["label"], verdict["confidence"], verdict["leaning"], verdict["raw_label"]) == (
        "UNCLEAR",
        0.48,
        "SUPPORT",
        "NO_EVIDENCE",
    )
    assert verdict["probabilities"] == UNCLEAR_PROBABILITIES
    assert verdict["raw_probabilities"] == UNCLEAR_RAW_PROBABILITIES
    assert verdict["evidence_text"] == ["No cases of lactic acidosis occurred."]


def test_an_unknown_question_is_404(researcher: APIClient) -> None:
    assert researcher.get("/api/v1/questions/999").status_code == 404
    assert researcher.post("/api/v1/questions/999/cancel").status_code == 404


# --- cancelling


def test_the_owner_cancels_a_queued_question(researcher: APIClient) -> None:
    question = _ask(researcher)
    response = researcher.post(f"/api/v1/questions/{question.pk}/cancel")
    assert response.status_code == 200
    assert response.json() == {"id": question.pk, "status": "cancelled", "cancel_requested": True}
    question.refresh_from_db()
    assert question.status == Question.Status.CANCELLED


def test_a_reviewer_may_read_but_not_cancel_someone_elses_question(researcher: APIClient, reviewer: APIClient) -> None:
    question = _ask(researcher)
    response = reviewer.post(f"/api/v1/questions/{question.pk}/cancel")
    assert response.status_code == 403
    question.refresh_from_db()
    assert (question.status, question.cancel_requested) == (Question.Status.QUEUED, False)


def test_another_researcher_cannot_cancel_and_learns_nothing(researcher: APIClient, other: APIClient) -> None:
    question = _ask(researcher)
    assert other.post(f"/api/v1/questions/{question.pk}/cancel").status_code == 404
    question.refresh_from_db()
    assert question.status == Question.Status.QUEUED


def test_an_admin_may_cancel_anyones_question(researcher: APIClient, admin: APIClient) -> None:
    question = _ask(researcher)
    assert admin.post(f"/api/v1/questions/{question.pk}/cancel").json()["status"] == "cancelled"


def test_cancelling_a_finished_question_leaves_it_as_it_is(researcher: APIClient, answered: Question) -> None:
    response = researcher.post(f"/api/v1/questions/{answered.pk}/cancel")
    assert response.status_code == 200
    assert response.json() == {"id": answered.pk, "status": "done", "cancel_requested": False}


# --- articles


def test_an_article_comes_with_its_sentences_and_offsets(researcher: APIClient, answered: Question) -> None:
    article = researcher.get("/api/v1/articles/123").json()
    assert article["authors"] == ["A Author"]
    assert article["url"] == "https://pubmed.ncbi.nlm.nih.gov/123/"
    assert [s["text"] for s in article["sentences"]][1] == "No cases of lactic acidosis occurred."
    for sentence in article["sentences"]:
        assert article["abstract"][sentence["start"] : sentence["end"]] == sentence["text"]


def test_sources_and_articles_carry_their_retraction_and_study_design(
    researcher: APIClient, answered: Question
) -> None:
    notice = "Retraction: Metformin and lactic acidosis. 2012."
    article_retracted(pmid="123", notice_pmid="456", notice=notice)
    Article.objects.filter(pmid="123").update(publication_types=["Journal Article", "Randomized Controlled Trial"])

    source = researcher.get(f"/api/v1/questions/{answered.pk}").json()["retrieved"][0]["source"]
    article = researcher.get("/api/v1/articles/123").json()

    for shown in (source, article):
        assert shown["retraction"] == {
            "status": "retracted",
            "notices": [{"ref_type": "RetractionIn", "pmid": "456", "source": notice}],
        }
        assert shown["study_design"] == {"key": "rct", "label": "Randomised controlled trial"}


def test_a_source_with_no_notices_or_design_says_so(researcher: APIClient, answered: Question) -> None:
    source = researcher.get(f"/api/v1/questions/{answered.pk}").json()["retrieved"][0]["source"]
    assert source["retraction"] == {"status": "none", "notices": []}
    assert source["study_design"] is None


def test_the_source_settings_are_booleans(researcher: APIClient) -> None:
    response = researcher.post("/api/v1/questions", {"question": "Q?", "include_retracted": "maybe"}, format="json")
    assert response.status_code == 400
    assert "include_retracted" in response.json()


def test_an_unknown_article_is_404(researcher: APIClient) -> None:
    assert researcher.get("/api/v1/articles/42").status_code == 404


# --- flags


def _flag(client: APIClient, question: Question, **body: object) -> dict[str, Any]:
    response = client.post(
        "/api/v1/flags", {"question": question.pk, "sentence": 0, "reason": "unsupported", **body}, format="json"
    )
    assert response.status_code == 201, response.json()
    return dict(response.json())


def test_a_researcher_flags_a_sentence_of_their_answer(
    researcher: APIClient, answered: Question, role_users: dict[str, User]
) -> None:
    body = _flag(researcher, answered, pmid="123", comment="  The abstract says nothing about dose.  ")
    flag = Flag.objects.get(pk=body["id"])
    assert (flag.question, flag.sentence.position, flag.pmid) == (answered, 0, "123")
    assert flag.flagged_by == role_users[RESEARCHER]
    assert flag.verifier_verdict == "SUPPORT"
    assert body["comment"] == "The abstract says nothing about dose."
    assert (body["sentence"], body["sentence_text"], body["status"]) == (0, "No.", "open")
    assert (body["flagged_by"], body["verifier_confirmed"]) == ("researcher-user", None)


def test_a_flag_on_an_unclear_sentence_records_the_unclear_verdict(researcher: APIClient, answered: Question) -> None:
    unclear_sentence(question=answered, position=2, pmid="123")
    body = _flag(researcher, answered, sentence=2, pmid="123", reason="wrong_verdict")
    assert (body["verifier_verdict"], body["verifier_confirmed"]) == ("UNCLEAR", None)


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"sentence": 5}, "non_field_errors", "the answer has no sentence 5"),
        ({"pmid": "456"}, "non_field_errors", "does not cite PMID 456"),
        ({"reason": "boring"}, "reason", "not a valid choice"),
        ({"sentence": -1}, "sentence", "greater than or equal to 0"),
        ({"comment": "x" * 4001}, "comment", "no more than 4000 characters"),
        ({"question": 999}, "question", "No such question."),
    ],
)
def test_invalid_flags_are_400_with_messages(
    researcher: APIClient, answered: Question, body: dict[str, object], field: str, message: str
) -> None:
    response = researcher.post(
        "/api/v1/flags", {"question": answered.pk, "sentence": 0, "reason": "unsupported", **body}, format="json"
    )
    assert response.status_code == 400
    assert any(message in text for text in response.json()[field]), response.json()
    assert not Flag.objects.exists()


def test_a_question_one_may_not_see_cannot_be_flagged(other: APIClient, answered: Question) -> None:
    response = other.post(
        "/api/v1/flags", {"question": answered.pk, "sentence": 0, "reason": "unsupported"}, format="json"
    )
    assert response.status_code == 400
    assert response.json() == {"question": ["No such question."]}


def test_researchers_see_their_own_flags_and_reviewers_all(
    researcher: APIClient, other: APIClient, reviewer: APIClient, answered: Question
) -> None:
    mine = _flag(researcher, answered)
    reviewers = _flag(reviewer, answered, sentence=1, reason="wrong_citation", pmid="999")
    assert [f["id"] for f in researcher.get("/api/v1/flags").json()["results"]] == [mine["id"]]
    assert researcher.get(f"/api/v1/flags/{reviewers['id']}").status_code == 404
    assert other.get("/api/v1/flags").json()["count"] == 0
    assert other.get(f"/api/v1/flags/{mine['id']}").status_code == 404
    assert [f["id"] for f in reviewer.get("/api/v1/flags").json()["results"]] == [reviewers["id"], mine["id"]]
    assert reviewer.get(f"/api/v1/flags/{mine['id']}").json()["reason"] == "unsupported"


def test_the_flag_list_filters_by_status_reason_and_question(
    reviewer: APIClient, researcher: APIClient, answered: Question
) -> None:
    unsupported = _flag(researcher, answered)
    wrong = _flag(reviewer, answered, sentence=1, reason="wrong_citation")
    Flag.objects.filter(pk=wrong["id"]).update(status=Flag.Status.DISMISSED)
    later = _ask(researcher)

    def ids(**query: object) -> list[object]:
        return [f["id"] for f in reviewer.get("/api/v1/flags", query).json()["results"]]

    assert ids(reason="unsupported") == [unsupported["id"]]
    assert ids(status="dismissed") == [wrong["id"]]
    assert ids(status="open", reason="wrong_citation") == []
    assert ids(question=answered.pk) == [wrong["id"], unsupported["id"]]
    assert ids(question=later.pk) == []
    assert reviewer.get("/api/v1/flags", {"reason": "boring"}).status_code == 400
