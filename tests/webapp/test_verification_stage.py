"""The verify stage with the product's own verifier (the committed cross-encoder and evidence tagger), no LLM."""

from __future__ import annotations

from pytest_django.fixtures import Settings

from indexer.records import ArticleRecord
from webapp.qa import services
from webapp.qa.models import CitationVerdict, Question
from webapp.qa.pipeline import default_pipeline_settings
from webapp.qa.selectors import question_get, question_payload
from webapp.qa.verification import answer_verifier

ANSWER = (
    "Metformin did not cause lactic acidosis over two years (PUBMED:10000001). "
    "Everolimus inhibits mTORC1 (PUBMED:10000002; PUBMED:99999999). "
    "This sentence cites nothing."
)


def answered(text: str = ANSWER) -> Question:
    question = services.question_create(text="Does metformin cause lactic acidosis?", enqueue=False)
    question.answer_text = text
    question.context = {"given": ["10000001", "10000002"]}
    question.status = Question.Status.GENERATING
    question.save()
    return question


def test_each_citation_gets_a_verdict_confidence_and_evidence_offsets(
    indexed_articles: list[ArticleRecord],
) -> None:
    question = answered()
    services.question_verify(question_id=question.pk)

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
            assert citation.label in ("SUPPORT", "CONTRADICT", "NO_EVIDENCE")
            assert 1 / 3 <= citation.confidence <= 1
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
    services.question_verify(question_id=question.pk)
    first_count = CitationVerdict.objects.filter(sentence__question=question).count()
    Question.objects.filter(pk=question.pk).update(status=Question.Status.GENERATING)
    services.question_verify(question_id=question.pk)
    assert CitationVerdict.objects.filter(sentence__question=question).count() == first_count == 3


def test_the_llm_judge_stays_selectable(settings: Settings, db: None) -> None:
    settings.VERIMED_VERIFIER = "llm-judge"
    pipeline = default_pipeline_settings()
    assert pipeline.verification.verifier == "llm-judge"
    assert answer_verifier(pipeline).classifier.model_id == f"llm-judge:{settings.VERIMED_LLM_MODEL}"
