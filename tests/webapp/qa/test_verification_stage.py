"""The verify stage with the product's own verifier (the committed cross-encoder and evidence tagger), no LLM."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from pytest_django.fixtures import Settings

from indexer.records import ArticleRecord
from tests.webapp.conftest import ARTICLES
from tests.webapp.factories import UNCLEAR_PROBABILITIES, UNCLEAR_RAW_PROBABILITIES
from verifier.base import Classification
from verifier.verify import AnswerVerifier
from webapp.corpus.models import Article
from webapp.qa.models import CitationVerdict, Question
from webapp.qa.pipeline import PipelineSettings, default_pipeline_settings
from webapp.qa.selectors import question_get, question_payload
from webapp.qa.services import admission, verify
from webapp.qa.verification import answer_verifier

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model

ANSWER = (
    "Metformin did not cause lactic acidosis over two years (PUBMED:10000001). "
    "Everolimus inhibits mTORC1 (PUBMED:10000002; PUBMED:99999999). "
    "This sentence cites nothing."
)


def answered(text: str = ANSWER) -> Question:
    question = admission.question_create(text="Does metformin cause lactic acidosis?", enqueue=False)
    question.answer_text = text
    question.context = {"given": ["10000001", "10000002"]}
    question.status = Question.Status.GENERATING
    question.save()
    return question


def test_each_citation_gets_a_verdict_confidence_and_evidence_offsets(
    indexed_articles: list[ArticleRecord],
) -> None:
    question = answered()
    verify.question_verify(question_id=question.pk)

    question = question_get(question_id=question.pk)
    assert question.status == Question.Status.DONE
    assert question.models_used["verifier"].startswith("cross-encoder:")
    assert question.models_used["evidence"].startswith("late-fusion:")
    first, second, third = question.sentences.all()
    abstracts = {article.pmid: article.abstract for article in indexed_articles}
    for sentence in (first, second):
        for citation in sentence.citations.all():
            if citation.pmid == "99999999":
                assert citation.label == "NO_REFERENCE"
                assert citation.confidence is None
                continue
            assert citation.label in ("SUPPORT", "CONTRADICT", "NO_EVIDENCE", "UNCLEAR")
            assert citation.leaning in ("SUPPORT", "CONTRADICT", "NO_EVIDENCE")
            assert citation.label in (citation.leaning, "UNCLEAR")
            # A label bias can pick a label that is not the most probable, so only the bounds of a probability hold.
            assert 0 < citation.confidence <= 1
            assert citation.probabilities[citation.leaning] == pytest.approx(citation.confidence)
            assert set(citation.raw_probabilities) == {"SUPPORT", "CONTRADICT", "NO_EVIDENCE"}
            assert citation.raw_label == max(citation.raw_probabilities, key=citation.raw_probabilities.__getitem__)
            assert "SUPPORT=" in citation.judge_output
            for start, end in citation.evidence_spans:
                # Offsets land exactly on sentence boundaries of the stored abstract.
                text = abstracts[citation.pmid][start:end]
                assert text == text.strip()
                assert text.endswith(".")
    assert third.verdict == "UNCITED"
    assert third.confidence is None
    payload = question_payload(question)
    assert payload["sentences"][1]["verdicts"]["99999999"]["label"] == "NO_REFERENCE"


def test_a_retried_verification_replaces_its_rows(indexed_articles: list[ArticleRecord]) -> None:
    question = answered()
    verify.question_verify(question_id=question.pk)
    first_count = CitationVerdict.objects.filter(sentence__question=question).count()
    Question.objects.filter(pk=question.pk).update(status=Question.Status.GENERATING)
    verify.question_verify(question_id=question.pk)
    assert CitationVerdict.objects.filter(sentence__question=question).count() == first_count == 3


def test_the_llm_judge_stays_selectable(settings: Settings, db: None) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_VERIFIER="llm-judge")
    pipeline = default_pipeline_settings()
    assert pipeline.verification.verifier == "llm-judge"
    assert answer_verifier(pipeline).classifier.model_id == f"llm-judge:{settings.VERIMED.llm.model}"


class _UnsureClassifier:
    """Leans SUPPORT on every pair at a calibrated 48%, below the checkpoint's threshold for showing it."""

    model_id = "unsure-test"

    def classify(self, pairs: Sequence[tuple[str, str]]) -> list[Classification]:
        return [
            Classification(
                label="SUPPORT",
                confidence=0.48,
                probabilities=UNCLEAR_PROBABILITIES,
                shown="UNCLEAR",
                raw_label="NO_EVIDENCE",
                raw_probabilities=UNCLEAR_RAW_PROBABILITIES,
            )
            for _ in pairs
        ]


class _SecondSentenceEvidence:
    model_id = "second-sentence-test"

    def scores(self, claim: str, sentences: Sequence[str]) -> list[float]:
        return [1.0 if index == 1 else 0.0 for index in range(len(sentences))]

    def is_evidence(self, score: float) -> bool:
        return score > 0.5


def test_an_unsure_citation_is_stored_as_unclear_with_its_leaning_probabilities_and_evidence(
    db: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for article in ARTICLES:
        Article.objects.create(pmid=article.pmid, title=article.title, abstract=article.abstract)

    def unsure_verifier(pipeline: PipelineSettings) -> AnswerVerifier:
        return AnswerVerifier(_UnsureClassifier(), _SecondSentenceEvidence())

    monkeypatch.setattr(verify, "answer_verifier", unsure_verifier)
    question = answered("No metformin user had lactic acidosis (PUBMED:10000001). Uncited.")
    verify.question_verify(question_id=question.pk)

    question = question_get(question_id=question.pk)
    assert question.status == Question.Status.DONE
    unclear, uncited = question.sentences.all()
    assert (unclear.verdict, unclear.confidence) == ("UNCLEAR", 0.48), "every citation Unclear: the sentence is too"
    assert uncited.verdict == "UNCITED"
    citation = unclear.citations.get()
    assert (citation.label, citation.confidence, citation.leaning, citation.raw_label) == (
        "UNCLEAR",
        0.48,
        "SUPPORT",
        "NO_EVIDENCE",
    )
    assert citation.probabilities == UNCLEAR_PROBABILITIES
    assert citation.raw_probabilities == UNCLEAR_RAW_PROBABILITIES
    assert citation.evidence_sentences == [1], "an Unclear citation still shows the evidence it leaned on"

    shown = question_payload(question)["sentences"][0]
    assert shown["verdict"] == "UNCLEAR"
    assert shown["verdicts"]["10000001"] == {
        "label": "UNCLEAR",
        "confidence": 0.48,
        "leaning": "SUPPORT",
        "raw_label": "NO_EVIDENCE",
        "probabilities": UNCLEAR_PROBABILITIES,
        "raw_probabilities": UNCLEAR_RAW_PROBABILITIES,
        "evidence_sentences": [1],
        "evidence_spans": citation.evidence_spans,
        "evidence_text": ["No cases of lactic acidosis occurred."],
    }
