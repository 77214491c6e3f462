"""The OpenAPI schema: committed, current, warning-free, public, with token auth; and it tells the truth about
the payloads the selectors return."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import AnonymousUser, User
from django.core.management import call_command
from django.test import Client
from rest_framework import serializers

from tests.webapp.factories import recheck_stored
from verifier.bottom_line import load_bottom_line_rule
from verifier.fake_classifier import FakeClaimClassifier
from verifier.fake_evidence import FakeEvidenceFinder
from verifier.verify import AnswerVerifier
from webapp.api.serializers.articles import ArticleSerializer
from webapp.api.serializers.question_detail import QuestionDetailSerializer
from webapp.corpus.models import Article
from webapp.qa import selectors
from webapp.qa.consensus import question_consensus
from webapp.qa.models import AnswerSentence, CitationVerdict, Question, RetrievedDocument
from webapp.watch.selectors import question_watch_payload

REPO = Path(__file__).resolve().parents[3]
COMMITTED = REPO / "docs" / "openapi.yaml"
# The rule shipped beside the default verifier: it weighs the answer model's reading, so the payload carries one.
SHIPPED_RULE = REPO / "verifier" / "models" / "verimed-mpnet-verifier"


@pytest.mark.django_db
def test_the_committed_schema_is_what_the_code_generates_without_warnings(tmp_path: Path) -> None:
    fresh = tmp_path / "openapi.yaml"
    # --fail-on-warn turns any generator warning (an undocumented view, an unresolvable type) into an error.
    call_command("spectacular", "--file", str(fresh), "--validate", "--fail-on-warn")
    assert fresh.read_text() == COMMITTED.read_text(), (
        "docs/openapi.yaml is stale: run `manage.py spectacular --file docs/openapi.yaml --validate --fail-on-warn`"
    )


def _schema(client: Client) -> dict[str, Any]:
    response = client.get("/api/schema/")
    assert response.status_code == 200
    loaded: dict[str, Any] = yaml.safe_load(response.content)
    return loaded


@pytest.mark.django_db
def test_the_schema_is_public_and_requires_a_token_for_the_api(client: Client) -> None:
    schema = _schema(client)
    assert schema["components"]["securitySchemes"]["tokenAuth"] == {
        "type": "apiKey",
        "in": "header",
        "name": "Authorization",
        "description": 'Token-based authentication with required prefix "Token"',
    }
    operations = [
        (path, method, operation) for path, methods in schema["paths"].items() for method, operation in methods.items()
    ]
    # 4 of them for watched answers: watch, unwatch, notifications, mark read; 3 for the deep check: run, read, stop;
    # 1 to ask a failed question again; 4 for the library: list, upload, read, delete; 2 for the token: rotate, revoke
    assert len(operations) == 23
    for path, method, operation in operations:
        if path == "/api/v1/auth/token":
            assert "security" not in operation  # the one call made before having a token
        else:
            assert {"tokenAuth": []} in operation["security"], (path, method)
            assert {} not in operation["security"], (path, method)  # auth is not optional


@pytest.mark.django_db
def test_the_question_result_is_documented_not_an_empty_object(client: Client) -> None:
    schema = _schema(client)
    ok = schema["paths"]["/api/v1/questions/{question_id}"]["get"]["responses"]["200"]
    assert ok["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/QuestionDetail"}
    verdict = schema["components"]["schemas"]["CitationVerdict"]["properties"]
    assert {"label", "confidence", "evidence_sentences", "evidence_spans", "evidence_text"} <= set(verdict)


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/docs/", "/api/redoc/"])
def test_the_docs_pages_load_their_assets_from_the_site_not_a_cdn(client: Client, path: str) -> None:
    page = client.get(path)
    assert page.status_code == 200
    html = page.content.decode()
    assert "/static/drf_spectacular_sidecar/" in html
    assert "cdn.jsdelivr" not in html
    if path == "/api/docs/":  # Swagger UI's start-up script is a file of its own (no inline script, for the CSP)
        html += client.get(path, {"script": ""}).content.decode()
    assert "/api/schema/" in html


def _assert_documented(serializer: serializers.Serializer, value: dict[str, Any], where: str) -> None:
    """Every key the payload has is a documented field and the other way round, all the way down."""
    assert set(serializer.fields) == set(value), where
    for name, field in serializer.fields.items():
        item = value[name]
        if isinstance(field, serializers.ListSerializer):
            assert item, f"{where}.{name}: the fixture should fill it"
            for element in item:
                _assert_documented(field.child, element, f"{where}.{name}[]")
        elif isinstance(field, serializers.Serializer):
            assert item is not None, f"{where}.{name}: the fixture should fill it"
            _assert_documented(field, item, f"{where}.{name}")
        elif isinstance(field, serializers.DictField) and isinstance(field.child, serializers.Serializer):
            assert item, f"{where}.{name}: the fixture should fill it"
            for key, element in item.items():
                _assert_documented(field.child, element, f"{where}.{name}[{key}]")


@pytest.fixture
def answered(role_users: dict[str, User]) -> Question:
    # 125 was cited earlier in the thread: given to the model besides what the follow-up retrieved (thread_sources).
    abstracts = {"123": "One sentence. Aspirin is effective. Last.", "125": "One sentence. Evidence here. Last."}
    for pmid, abstract in abstracts.items():
        Article.objects.create(
            pmid=pmid,
            title="T",
            abstract=abstract,
            journal="J",
            year=2020,
            authors=["A B"],
            publication_types=["Randomized Controlled Trial"],
            retraction_status=Article.Retraction.CORRECTED,
            retraction_notices=[{"ref_type": "ErratumIn", "pmid": "124", "source": "J. 2021;1:2"}],
        )
    first = Question.objects.create(text="P?", user=role_users["researcher"], status=Question.Status.DONE)
    question = Question.objects.create(
        text="Is aspirin effective?",
        user=role_users["researcher"],
        status=Question.Status.DONE,
        parent=first,
        thread=first,
        context={"given": ["123", "125"]},
        answer_text="Yes (PUBMED:123).",
        citation_notes=[{"written": "PUBMED:124", "raw_id": "124", "pmid": "123", "how": "repaired"}],
        # The dense search's closest candidate, ranked below the sources: the consensus reads it too.
        closest_candidate={"pmid": "125", "semantic_score": 0.8},
        timings_ms={"queue": 40.0, "retrieval": 200.0, "generation": 900.0, "generation_ttft": 600.0},
    )
    RetrievedDocument.objects.create(
        question=question, rank=1, pmid="123", score=0.9, lexical_score=1.0, semantic_score=0.6
    )
    # Made the way the verify stage makes it (webapp/qa/services/verify.py), the fake verifier reading the abstracts
    # and stand-ins for the answer model's two readings, so the documented shape is checked against the writer's.
    question.consensus = question_consensus(
        question=question,
        verifier=AnswerVerifier(FakeClaimClassifier(), FakeEvidenceFinder()),
        rule=load_bottom_line_rule(SHIPPED_RULE),
        answer_text="Yes.",
        read_model=lambda question, title, abstract: -4.1,
        read_answer_stance=lambda: "yes",
    )
    assert question.consensus is not None
    assert question.consensus["verdicts"].keys() == {"123", "125"}
    assert question.consensus["bottom_line"]["model_reading"] is not None
    question.save(update_fields=["consensus"])
    sentence = AnswerSentence.objects.create(
        question=question, position=0, text="Yes (PUBMED:123).", display_text="Yes.", verdict="SUPPORT"
    )
    CitationVerdict.objects.create(sentence=sentence, position=0, pmid="123", label="SUPPORT", evidence_sentences=[1])
    return question


def test_the_documented_question_shape_is_the_selectors(answered: Question) -> None:
    recheck_stored(question=answered)
    payload = selectors.question_payload(selectors.question_get(question_id=answered.pk))
    # The views add whether the caller watches it, and its re-checks (webapp/watch).
    payload |= question_watch_payload(question=answered, user=answered.user or AnonymousUser())
    _assert_documented(QuestionDetailSerializer(), payload, "question")


def test_the_documented_article_shape_is_the_selectors(answered: Question) -> None:
    _assert_documented(ArticleSerializer(), selectors.article_payload(pmid="123"), "article")
