"""Read-side: a question and everything it produced, as the plain JSON the page, the API and the CLI share."""

from __future__ import annotations

from typing import Any

from django.db.models import Prefetch

from verifier.sentences import split_sentences
from webapp.corpus.models import Article
from webapp.qa.models import AnswerSentence, Question


def question_get(*, question_id: int) -> Question:
    return Question.objects.prefetch_related(
        "retrieved", Prefetch("sentences", queryset=AnswerSentence.objects.prefetch_related("citations"))
    ).get(pk=question_id)


def _source(article: Article) -> dict[str, Any]:
    return {
        "pmid": article.pmid,
        "title": article.title,
        "journal": article.journal,
        "year": article.year,
        "url": article.url,
    }


def question_payload(question: Question) -> dict[str, Any]:
    retrieved = list(question.retrieved.all())
    articles = Article.objects.in_bulk([doc.pmid for doc in retrieved], field_name="pmid")
    return {
        "id": question.pk,
        "question": question.text,
        "status": question.status,
        "error": question.error,
        "answer": question.answer_text,
        "answer_raw": question.answer_raw,
        "cannot_answer": question.cannot_answer,
        "cancel_requested": question.cancel_requested,
        "first_token_at": question.first_token_at.isoformat() if question.first_token_at else None,
        "context": question.context,
        "citation_notes": question.citation_notes,
        "sentences": [
            {
                "text": sentence.text,
                "display_text": sentence.display_text,
                "verdict": sentence.verdict,
                "confidence": sentence.confidence,
                "citations": [citation.pmid for citation in sentence.citations.all()],
                "verdicts": {
                    citation.pmid: {
                        "label": citation.label,
                        "confidence": citation.confidence,
                        "evidence_sentences": citation.evidence_sentences,
                        "evidence_spans": citation.evidence_spans,
                    }
                    for citation in sentence.citations.all()
                },
            }
            for sentence in question.sentences.all()
        ],
        "retrieved": [
            {
                "pmid": doc.pmid,
                "rank": doc.rank,
                "score": doc.score,
                "lexical_score": doc.lexical_score,
                "semantic_score": doc.semantic_score,
                "lexical_raw": doc.lexical_raw,
                "semantic_raw": doc.semantic_raw,
                "source": _source(articles[doc.pmid]) if doc.pmid in articles else None,
            }
            for doc in retrieved
        ],
        "timings_ms": question.timings_ms,
        "models": question.models_used,
        "settings": question.settings,
    }


def article_payload(*, pmid: str) -> dict[str, Any]:
    """An article with its abstract split exactly as the verifier split it, so evidence indices line up."""
    article = Article.objects.get(pmid=pmid)
    return {
        **_source(article),
        "authors": article.authors,
        "abstract": article.abstract,
        "sentences": [
            {"text": span.text, "start": span.start, "end": span.end} for span in split_sentences(article.abstract)
        ],
    }
