"""The question pipeline's services: create, retrieve, generate, verify, fail. Tasks call these; views call create."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import transaction

from generator.answer import answer_messages
from generator.prompts import CANNOT_ANSWER
from indexer.hybrid import hybrid_search
from verifier.claims import claims_from_answer
from verifier.evidence import select_evidence
from verifier.llm_judge import LlmJudge
from verifier.sentences import split_sentences
from verifier.verdicts import NO_REFERENCE, overall_verdict
from webapp.corpus import engines
from webapp.corpus.models import Article
from webapp.qa.context import generation_context
from webapp.qa.llm import llm_for
from webapp.qa.models import AnswerSentence, CitationVerdict, Question, RetrievedDocument
from webapp.qa.pipeline import PipelineSettings, default_pipeline_settings

# How often streamed tokens are written to the row the page polls: often enough to look live, rarely enough
# that SQLite is not written for every token.
STREAM_FLUSH_SECONDS = 0.25


class QuestionRejectedError(ValueError):
    """The question cannot be asked as given; the message says why, for the person who typed it."""


def question_validate(*, text: str) -> str:
    cleaned = text.strip()
    if not cleaned:
        raise QuestionRejectedError("Please type a question.")
    limit = settings.VERIMED_MAX_QUESTION_CHARS
    if len(cleaned) > limit:
        raise QuestionRejectedError(f"Questions are limited to {limit:,} characters; this one has {len(cleaned):,}.")
    return cleaned


def question_create(
    *, text: str, user: AbstractBaseUser | AnonymousUser | None = None, enqueue: bool = True
) -> Question:
    cleaned = question_validate(text=text)
    question = Question.objects.create(
        text=cleaned,
        user=user if isinstance(user, User) else None,
        settings=default_pipeline_settings().model_dump(),
    )
    if enqueue:
        from webapp.qa.tasks import question_pipeline

        transaction.on_commit(lambda: question_pipeline(question.pk).apply_async())
    return question


def _pipeline(question: Question) -> PipelineSettings:
    return PipelineSettings.model_validate(question.settings)


def _record_timing(question: Question, stage: str, started: float, **extra: Any) -> None:
    question.timings_ms = {**question.timings_ms, stage: round((time.perf_counter() - started) * 1000, 1), **extra}


def _enter_stage(question_id: int, status: Question.Status) -> Question:
    question = Question.objects.get(pk=question_id)
    question.status = status
    question.save(update_fields=["status", "updated_at"])
    return question


def question_retrieve(*, question_id: int) -> None:
    question = _enter_stage(question_id, Question.Status.RETRIEVING)
    pipeline = _pipeline(question)
    started = time.perf_counter()
    hits = hybrid_search(
        question.text,
        lexical=engines.lexical_index(),
        vectors=engines.vector_index(),
        embedder=engines.embedder(),
        settings=pipeline.retrieval,
    )
    with transaction.atomic():
        question.retrieved.all().delete()  # a retried task starts this stage over
        RetrievedDocument.objects.bulk_create(
            RetrievedDocument(
                question=question,
                rank=rank,
                pmid=hit.pmid,
                score=hit.score,
                lexical_score=hit.lexical_score,
                semantic_score=hit.semantic_score,
                lexical_raw=hit.lexical_raw,
                semantic_raw=hit.semantic_raw,
            )
            for rank, hit in enumerate(hits, start=1)
        )
        _record_timing(question, "retrieval", started)
        question.models_used = {**question.models_used, "embedding": engines.embedder().model_id}
        question.save(update_fields=["timings_ms", "models_used", "updated_at"])


def question_generate(*, question_id: int) -> None:
    question = _enter_stage(question_id, Question.Status.GENERATING)
    question.answer_text = ""
    question.save(update_fields=["answer_text", "updated_at"])
    pipeline = _pipeline(question)
    started = time.perf_counter()
    context = generation_context(question, pipeline)
    _record_timing(question, "context", started)
    if not context:
        question.answer_text, question.cannot_answer = CANNOT_ANSWER, True
        question.save(update_fields=["answer_text", "cannot_answer", "timings_ms", "updated_at"])
        return
    llm = llm_for(pipeline)
    options = pipeline.generation
    messages = answer_messages(question.text, context, abstract_chars=options.abstract_chars)
    started = time.perf_counter()
    first_token_at: float | None = None
    pieces: list[str] = []
    last_flush = started
    for delta in llm.stream_chat(
        messages, max_tokens=options.max_tokens, temperature=options.temperature, repeat_penalty=options.repeat_penalty
    ):
        first_token_at = first_token_at or time.perf_counter()
        pieces.append(delta)
        if time.perf_counter() - last_flush >= STREAM_FLUSH_SECONDS:
            Question.objects.filter(pk=question.pk).update(answer_text="".join(pieces))
            last_flush = time.perf_counter()
    answer = "".join(pieces).strip()
    question.answer_text = answer
    ttft_ms = round(((first_token_at or time.perf_counter()) - started) * 1000, 1)
    stream_seconds = time.perf_counter() - (first_token_at or started)
    _record_timing(
        question,
        "generation",
        started,
        generation_ttft=ttft_ms,
        # OpenAI-compatible servers (llama.cpp, vLLM) stream one token per chunk.
        generation_tokens_per_s=round(len(pieces) / stream_seconds, 1) if stream_seconds > 0 else 0.0,
    )
    question.models_used = {**question.models_used, "generator": llm.model_id}
    question.save(update_fields=["answer_text", "timings_ms", "models_used", "updated_at"])


def question_verify(*, question_id: int) -> None:
    question = _enter_stage(question_id, Question.Status.VERIFYING)
    pipeline = _pipeline(question)
    started = time.perf_counter()
    judge = LlmJudge(llm_for(pipeline))
    retrieved = set(question.retrieved.values_list("pmid", flat=True))
    claims = [] if question.cannot_answer else claims_from_answer(question.answer_text)
    articles = Article.objects.in_bulk([pmid for claim in claims for pmid in claim.citations], field_name="pmid")
    rows: list[tuple[AnswerSentence, list[CitationVerdict]]] = []
    for position, claim in enumerate(claims):
        verdicts = []
        for citation_position, pmid in enumerate(claim.citations):
            article = articles.get(pmid)
            if pmid not in retrieved or article is None:
                verdicts.append(CitationVerdict(position=citation_position, pmid=pmid, label=NO_REFERENCE))
                continue
            sentences = [span.text for span in split_sentences(article.abstract)]
            chosen = select_evidence(
                claim.display_text,
                sentences,
                embedder=engines.embedder(),
                top_n=pipeline.verification.evidence_sentences,
            )
            judgement = judge.judge(claim.display_text, " ".join(sentences[index] for index in sorted(chosen)))
            verdicts.append(
                CitationVerdict(
                    position=citation_position,
                    pmid=pmid,
                    label=judgement.label,
                    evidence_sentences=chosen,
                    judge_output=judgement.raw,
                )
            )
        sentence = AnswerSentence(
            position=position,
            text=claim.text,
            display_text=claim.display_text,
            verdict=overall_verdict(verdict.label for verdict in verdicts),
        )
        rows.append((sentence, verdicts))
    with transaction.atomic():
        question.sentences.all().delete()  # a retried task starts this stage over
        for sentence, verdicts in rows:
            sentence.question = question
            sentence.save()
            for verdict in verdicts:
                verdict.sentence = sentence
            CitationVerdict.objects.bulk_create(verdicts)
        _record_timing(question, "verification", started)
        question.models_used = {**question.models_used, "verifier": judge.model_id}
        question.status = Question.Status.DONE
        question.save(update_fields=["status", "timings_ms", "models_used", "updated_at"])


def question_fail(*, question_id: int, reason: str) -> None:
    Question.objects.filter(pk=question_id).update(status=Question.Status.FAILED, error=reason[:2000])
