"""Read-side: a question and everything it produced, as the plain JSON the page, the API and the CLI share (its shape
is typed once, in webapp/qa/payloads.py)."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, cast

from django.core.cache import cache
from django.db.models import Prefetch, Q, QuerySet

from generator.citations import DOC_CITATION_ID
from indexer.sentences import split_sentences
from webapp.corpus.models import Article
from webapp.library.sources import library_pages
from webapp.qa.library_sources import library_source, withheld_source
from webapp.qa.models import AnswerSentence, Question, questions_lost
from webapp.qa.payloads import ArticlePayload, ConsensusPayload, QuestionPayload, SourcePayload
from webapp.qa.queue import UNFINISHED, question_queue_position
from webapp.qa.source_notes import source_retraction, source_study_design
from webapp.qa.stage_timings import stage_timings
from webapp.qa.threads import thread_question_ids


def _with_answer() -> QuerySet[Question]:
    return Question.objects.prefetch_related(
        "retrieved", Prefetch("sentences", queryset=AnswerSentence.objects.prefetch_related("citations"))
    )


def question_wait_finished(*, question_id: int, timeout: float, poll_seconds: float = 0.5) -> bool:
    """Wait for the workers to finish the question (done or failed); False when `timeout` seconds passed first."""
    deadline = time.monotonic() + timeout
    finished = (Question.Status.DONE, Question.Status.FAILED)
    while not Question.objects.filter(pk=question_id, status__in=finished).exists():
        if time.monotonic() >= deadline:
            return False
        time.sleep(poll_seconds)
    return True


def question_get(*, question_id: int) -> Question:
    return _with_answer().get(pk=question_id)


def _source(article: Article) -> SourcePayload:
    return {
        "pmid": article.pmid,
        "title": article.title,
        "journal": article.journal,
        "year": article.year,
        "url": article.url,
        "authors": article.authors,
        "doi": article.doi,
        "retraction": source_retraction(article),
        "study_design": source_study_design(article),
    }


def _evidence_texts(abstract_sentences: list[str], indices: list[int]) -> list[str]:
    return [abstract_sentences[index] for index in indices if 0 <= index < len(abstract_sentences)]


def _consensus(stored: dict[str, Any] | None) -> ConsensusPayload | None:
    """A consensus stored before its bottom line existed reads as one whose bottom line is null, and a bottom line
    stored before the LLM's reading existed as one without it, so every consensus has the same keys for a client."""
    if stored is None:
        return None
    bottom_line = stored.get("bottom_line")
    if bottom_line is not None:  # stored before the LLM's reading existed: it had none
        bottom_line = {
            "model_reading": None,
            "model_reading_failed": False,
            "model_alone": False,
            "answer_model_stance": None,  # stored before the answer model read its own answer's stance
            **bottom_line,
        }
    # A consensus stored before the closest candidate was read beside the first retrieved read none.
    return cast(ConsensusPayload, {"closest_read": None, **stored, "bottom_line": bottom_line})


def question_payload(question: Question, *, viewer_id: int | None = None) -> QuestionPayload:
    """`viewer_id`: who reads it. Pages of the asker's own library are shown (titles, evidence) to the asker alone;
    to anyone else (and with no viewer) they read as withheld."""
    retrieved = list(question.retrieved.all())
    sentences = list(question.sentences.all())
    cited = {citation.pmid for sentence in sentences for citation in sentence.citations.all()}
    # A follow-up is also given what its thread's earlier answers cited (webapp/qa/context.py): given, not retrieved.
    from_thread = [pmid for pmid in question.given_pmids if pmid not in {doc.pmid for doc in retrieved}]
    wanted = {doc.pmid for doc in retrieved} | cited | set(from_thread)
    articles = Article.objects.in_bulk(wanted, field_name="pmid")
    own = viewer_id is not None and viewer_id == question.user_id
    pages = library_pages(source_ids=wanted, owner_id=question.user_id) if own else {}
    sources: dict[str, SourcePayload] = {pmid: _source(article) for pmid, article in articles.items()}
    sources |= {key: library_source(page) for key, page in pages.items()}
    sources |= {
        key: withheld_source(key, deleted=own)
        for key in wanted
        if DOC_CITATION_ID.fullmatch(key) and key not in sources
    }
    texts = {pmid: article.abstract for pmid, article in articles.items()} | {k: p.text for k, p in pages.items()}
    # Split as the verifier split them, so `evidence_sentences` indices pick the sentences it meant.
    abstract_sentences = {pmid: [span.text for span in split_sentences(texts[pmid])] for pmid in cited if pmid in texts}
    return {
        "id": question.pk,
        "question": question.text,
        "status": question.shown_status,
        "queue_position": question_queue_position(question=question),
        "error": question.shown_error,
        "verification_status": question.verification_status or None,
        "verification_error": question.verification_error,
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
                        "leaning": citation.leaning or None,
                        "raw_label": citation.raw_label or None,
                        "probabilities": citation.probabilities,
                        "raw_probabilities": citation.raw_probabilities,
                        "evidence_sentences": citation.evidence_sentences,
                        "evidence_spans": citation.evidence_spans,
                        "evidence_text": _evidence_texts(
                            abstract_sentences.get(citation.pmid, []), citation.evidence_sentences
                        ),
                    }
                    for citation in sentence.citations.all()
                },
            }
            for sentence in sentences
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
                "rerank_score": doc.rerank_score,
                "source": sources.get(doc.pmid),
            }
            for doc in retrieved
        ],
        "thread_sources": [{"pmid": pmid, "source": sources[pmid]} for pmid in from_thread if pmid in sources],
        "parent": question.parent_id,
        "thread": question.thread_id,
        "thread_questions": thread_question_ids(question=question),
        "consensus": _consensus(question.consensus),
        "timings_ms": question.timings_ms,
        "stage_timings": stage_timings(
            question.timings_ms, bottom_line_first=bool(question.context.get("bottom_line_first"))
        ),
        "semantic_coverage": question.semantic_coverage,
        "models": question.models_used,
        "settings": question.settings,
    }


def library_page_payload(*, source_id: str, viewer_id: int | None) -> ArticlePayload:
    """A page of the viewer's own library in the abstract dialog's shape (its passages as the abstract, split as the
    verifier split them); LookupError for anyone else's page, or one that no longer exists."""
    page = library_pages(source_ids=[source_id], owner_id=viewer_id).get(source_id)
    if page is None:
        raise LookupError(source_id)
    return {
        **library_source(page),
        "abstract": page.text,
        "sentences": [{"text": span.text, "start": span.start, "end": span.end} for span in split_sentences(page.text)],
    }


def article_payload(*, pmid: str) -> ArticlePayload:
    """An article with its abstract split exactly as the verifier split it, so evidence indices line up."""
    article = Article.objects.get(pmid=pmid)
    return {
        **_source(article),
        "abstract": article.abstract,
        "sentences": [
            {"text": span.text, "start": span.start, "end": span.end} for span in split_sentences(article.abstract)
        ],
    }


@dataclass(frozen=True)
class FilterChoices:
    """Filter values present in the index as (value, count), most frequent first."""

    journals: list[tuple[str, int]]
    publication_types: list[tuple[str, int]]


FILTER_CHOICES_CACHE_KEY = "qa:filter-choices"
# Counting over a full PubMed baseline (tens of millions of rows) on every page view is too slow; the newest
# rows show which journals and types the index holds well enough, and the counts are cached for a while.
FILTER_CHOICES_SAMPLE = 20_000
FILTER_CHOICES_SECONDS = 600
MAX_JOURNAL_CHOICES = 200


def _count_filter_values() -> FilterChoices:
    journals: Counter[str] = Counter()
    types: Counter[str] = Counter()
    rows = Article.objects.order_by("-pk").values_list("journal", "publication_types")[:FILTER_CHOICES_SAMPLE]
    for journal, publication_types in rows:
        if journal:
            journals[journal] += 1
        types.update(str(kind) for kind in publication_types or () if kind)

    def ordered(counter: Counter[str], limit: int | None = None) -> list[tuple[str, int]]:
        return sorted(counter.items(), key=lambda item: (-item[1], item[0]))[:limit]

    return FilterChoices(journals=ordered(journals, MAX_JOURNAL_CHOICES), publication_types=ordered(types))


def article_filter_choices() -> FilterChoices:
    choices = cache.get(FILTER_CHOICES_CACHE_KEY)
    if not isinstance(choices, FilterChoices):
        choices = _count_filter_values()
        cache.set(FILTER_CHOICES_CACHE_KEY, choices, FILTER_CHOICES_SECONDS)
    return choices


def questions_history(
    *, visible: QuerySet[Question], user_id: int | None, search: str = "", status: str = ""
) -> QuerySet[Question]:
    """Questions newest first: `visible` narrowed to one person (None: everyone in it), a text search over the
    question and its answer (case-insensitive), and a status."""
    questions = visible.select_related("user").order_by("-created_at", "-pk")
    if user_id is not None:
        questions = questions.filter(user_id=user_id)
    if search.strip():
        term = search.strip()
        questions = questions.filter(Q(text__icontains=term) | Q(answer_text__icontains=term))
    if status:
        # By the status shown: a lost question (Question.lost) is failed.
        lost = Q(status__in=UNFINISHED) & questions_lost()
        if status == Question.Status.FAILED:
            questions = questions.filter(Q(status=status) | lost)
        else:
            questions = questions.filter(status=status).exclude(lost)
    return questions


def question_get_shared(*, token: str) -> Question:
    """The question a share link points to; an unknown or revoked token raises DoesNotExist."""
    if not token:
        raise Question.DoesNotExist("empty share token")
    return _with_answer().get(share_token=token)
