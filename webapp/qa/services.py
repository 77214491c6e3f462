"""The question pipeline's services: create, retrieve, generate, verify, fail. Tasks call these; views call create."""

from __future__ import annotations

import logging
import math
import time
from typing import Any, TypeVar

from celery import chain, signature
from celery.canvas import Signature
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import transaction
from django.utils import timezone
from pydantic import BaseModel, ValidationError

from generator.context_focus import packed_context
from generator.errors import GenerationError
from generator.generate import GeneratedAnswer, generate_answer
from generator.packing import PackedContext
from generator.prompts import CANNOT_ANSWER
from indexer.hybrid import HybridSettings
from webapp.corpus import engines
from webapp.corpus.services.background_embedding import semantic_coverage
from webapp.qa.consensus import question_consensus_or_none
from webapp.qa.context import generation_context
from webapp.qa.llm import llm_for, token_counter_for
from webapp.qa.models import AnswerSentence, CitationVerdict, Question, RetrievedDocument
from webapp.qa.pipeline import PipelineSettings, RetrievalFilters, default_pipeline_settings
from webapp.qa.queue import questions_unfinished_count
from webapp.qa.rate_limit import question_ask_again_at
from webapp.qa.source_screening import sources_search
from webapp.qa.verification import answer_verifier, question_verification_inputs

logger = logging.getLogger(__name__)

Stored = TypeVar("Stored", bound=BaseModel)

# How often streamed tokens are written to the row the page polls: often enough to look live, rarely enough
# that SQLite is not written for every token.
STREAM_FLUSH_SECONDS = 0.25


class QuestionRejectedError(ValueError):
    """The question cannot be asked as given; the message says why, for the person who typed it."""

    http_status = 400


class QueueFullError(QuestionRejectedError):
    """Too many questions are waiting or running: refused now, cleanly, rather than answered in an hour."""

    http_status = 503


def _queue_check() -> None:
    # Two requests at the same instant may both pass and overshoot the limit by one each: it is a load valve, not
    # an invariant, so it is not worth a table lock on every question.
    limit = settings.VERIMED_MAX_QUEUED_QUESTIONS
    if limit and (waiting := questions_unfinished_count()) >= limit:
        waiting_text = "1 question is" if waiting == 1 else f"{waiting:,} questions are"
        raise QueueFullError(f"The service is busy: {waiting_text} waiting. Please try again in a few minutes.")


class QuestionRateLimitedError(QuestionRejectedError):
    """This person has asked `VERIMED_QUESTIONS_PER_HOUR` questions in the last hour; others are unaffected."""

    http_status = 429

    def __init__(self, message: str, *, retry_after_seconds: int) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds


def _rate_check(user: AbstractBaseUser | AnonymousUser | None) -> None:
    per_hour = settings.VERIMED_QUESTIONS_PER_HOUR
    if not per_hour or not isinstance(user, User):  # 0 turns it off; command-line questions have no user
        return
    now = timezone.now()
    again = question_ask_again_at(user_id=user.pk, per_hour=per_hour, now=now)
    if again is not None:
        wait = max(1, math.ceil((again - now).total_seconds()))
        raise QuestionRateLimitedError(
            f"You have asked {per_hour} questions in the last hour, the most allowed. You can ask again at "
            f"{again:%H:%M} UTC (in {math.ceil(wait / 60)} min).",
            retry_after_seconds=wait,
        )


def question_rate_check(*, user: AbstractBaseUser | AnonymousUser | None) -> None:
    """Raise QuestionRateLimitedError when `user` may not ask now (a follow-up's rewrite checks before model time)."""
    _rate_check(user)


def question_max_chars() -> int:
    """The longest question accepted, in characters; the ask form's text box and the API take it from here."""
    return int(settings.VERIMED_MAX_QUESTION_CHARS)


def question_validate(*, text: str) -> str:
    cleaned = text.strip()
    if not cleaned:
        raise QuestionRejectedError("Please type a question.")
    limit = question_max_chars()
    if len(cleaned) > limit:
        raise QuestionRejectedError(f"Questions are limited to {limit:,} characters; this one has {len(cleaned):,}.")
    return cleaned


def question_create(
    *,
    text: str,
    user: AbstractBaseUser | AnonymousUser | None = None,
    enqueue: bool = True,
    filters: RetrievalFilters | None = None,
    retrieval: HybridSettings | None = None,
    parent: Question | None = None,
) -> Question:
    """Store a question with the settings it will be answered with; the site's defaults fill what is not given. A
    follow-up of `parent` joins its thread and searches as `parent` did, unless given other search settings."""
    cleaned = question_validate(text=text)
    _rate_check(user)
    if enqueue:
        _queue_check()
    if parent is not None:
        filters = filters or _stored_or_none(RetrievalFilters, parent.settings.get("filters"))
        retrieval = retrieval or _stored_or_none(HybridSettings, parent.settings.get("retrieval"))
    pipeline = default_pipeline_settings()
    if filters is not None:
        pipeline = pipeline.model_copy(update={"filters": filters})
    if retrieval is not None:
        pipeline = pipeline.model_copy(update={"retrieval": retrieval})
    question = Question.objects.create(
        text=cleaned,
        user=user if isinstance(user, User) else None,
        settings=pipeline.model_dump(mode="json"),
        parent=parent,
        thread_id=None if parent is None else parent.thread_id or parent.pk,
    )
    if enqueue:
        transaction.on_commit(lambda: question_enqueue(question_id=question.pk))
    return question


def _stored_or_none(model: type[Stored], stored: object) -> Stored | None:
    """Settings stored with an earlier question, or None (the defaults) where the fields have changed since."""
    try:
        return model.model_validate(stored) if stored is not None else None
    except ValidationError:
        return None


# A broker that is down must not hang the request that asked: publishing tries a few times, briefly, then gives up.
_PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0.2, "interval_step": 0.5, "interval_max": 1.0}


def question_pipeline(question_id: int) -> Signature:
    """Retrieve, then generate, then verify; each stage takes the question id the previous one returns.

    The stages are named, not imported: webapp/qa/tasks.py runs them by calling this module, and a name is all
    Celery needs to route and run a task.
    """
    return chain(
        signature("qa.question_retrieve", args=(question_id,), immutable=True),
        signature("qa.question_generate"),
        signature("qa.question_verify"),
    )


def question_enqueue(*, question_id: int) -> bool:
    """Hand the question to the workers. If the broker cannot take it, the question fails with a reason the page
    shows, instead of waiting forever in "queued" (or the request failing with a 500)."""
    from kombu.exceptions import OperationalError

    try:
        question_pipeline(question_id).apply_async(retry=True, retry_policy=_PUBLISH_RETRY_POLICY)
    except (OperationalError, ConnectionError, OSError) as exc:
        logger.warning("question %s could not be queued: %s", question_id, exc)
        question_fail(
            question_id=question_id,
            reason="The task queue is unreachable, so the question could not be started. Please try again shortly.",
        )
        return False
    return True


def _pipeline(question: Question) -> PipelineSettings:
    return PipelineSettings.model_validate(question.settings)


def _record_timing(question: Question, stage: str, started: float, **extra: Any) -> None:
    question.timings_ms = {**question.timings_ms, stage: round((time.perf_counter() - started) * 1000, 1), **extra}


class QuestionCancelledError(Exception):
    """The question was cancelled: the remaining stages do nothing."""


def _enter_stage(question_id: int, status: Question.Status) -> Question:
    question = Question.objects.get(pk=question_id)
    if question.cancel_requested or question.status == Question.Status.CANCELLED:
        raise QuestionCancelledError(f"question {question_id} was cancelled")
    question.status = status
    question.save(update_fields=["status", "updated_at"])
    return question


def question_retrieve(*, question_id: int) -> None:
    question = _enter_stage(question_id, Question.Status.RETRIEVING)
    pipeline = _pipeline(question)
    started = time.perf_counter()
    hits = sources_search(query=question.text, pipeline=pipeline)  # retracted out, designs ordered
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
                rerank_score=hit.rerank_score,
            )
            for rank, hit in enumerate(hits, start=1)
        )
        _record_timing(question, "retrieval", started)
        question.models_used = {**question.models_used, "embedding": engines.embedder().model_id}
        question.semantic_coverage = semantic_coverage().share
        question.save(update_fields=["timings_ms", "models_used", "semantic_coverage", "updated_at"])


def question_generate(*, question_id: int) -> None:
    question = _enter_stage(question_id, Question.Status.GENERATING)
    question.answer_text = question.answer_raw = ""
    question.save(update_fields=["answer_text", "answer_raw", "updated_at"])
    pipeline = _pipeline(question)
    packed = _packed_prompt(question, pipeline)
    if packed is None:
        return
    answer = _streamed_answer(question, pipeline, packed)
    _store_answer(question, answer)


def _packed_prompt(question: Question, pipeline: PipelineSettings) -> PackedContext | None:
    """The focused abstracts packed into the model's window, recorded on the question; None when nothing was
    retrieved, in which case the question is answered "cannot answer" on the spot."""
    options = pipeline.generation
    started = time.perf_counter()
    context = generation_context(question, pipeline)
    if not context:
        _record_timing(question, "context", started)
        question.answer_text, question.cannot_answer = CANNOT_ANSWER, True
        question.context = {"given": [], "trimmed": [], "dropped": []}
        question.save(update_fields=["answer_text", "cannot_answer", "context", "timings_ms", "updated_at"])
        return None
    packed = packed_context(question.text, context, options, counter=token_counter_for(pipeline))
    _record_timing(question, "context", started)
    question.context = {
        "given": [item.pmid for item in packed.abstracts],
        "trimmed": list(packed.trimmed),
        "dropped": list(packed.dropped),
        "prompt_tokens": packed.prompt_tokens,
        "budget_tokens": packed.budget_tokens,
        "prompt_style": options.prompt_style,
    }
    if not packed.abstracts:
        raise GenerationError(
            f"The question and the answer's room ({options.max_tokens} tokens) leave no space for any abstract in "
            f"the model's {options.context_tokens}-token window."
        )
    question.save(update_fields=["context", "timings_ms", "updated_at"])
    return packed


def _streamed_answer(question: Question, pipeline: PipelineSettings, packed: PackedContext) -> GeneratedAnswer:
    """The model's answer, written to the row as it streams (the page polls it) and stopped when cancelled; the
    generation timings and the model's id are recorded on `question`, unsaved."""
    llm = llm_for(pipeline)
    first_token_seen = False

    def show_partial(text: str) -> None:
        nonlocal first_token_seen
        changes: dict[str, Any] = {"answer_text": text}
        if not first_token_seen:
            changes["first_token_at"] = timezone.now()
            first_token_seen = True
        Question.objects.filter(pk=question.pk).update(**changes)

    started = time.perf_counter()
    answer = generate_answer(
        llm,
        packed.prompt,
        pipeline.generation.sampling(),
        given_pmids=[item.pmid for item in packed.abstracts],
        on_text=show_partial,
        should_stop=lambda: Question.objects.filter(pk=question.pk, cancel_requested=True).exists(),
        check_every_seconds=STREAM_FLUSH_SECONDS,
    )
    _record_timing(
        question,
        "generation",
        started,
        generation_ttft=answer.ttft_ms,
        generation_tokens_per_s=answer.tokens_per_s,
        generation_tokens=answer.chunks,
    )
    question.models_used = {**question.models_used, "generator": llm.model_id}
    return answer


def _store_answer(question: Question, answer: GeneratedAnswer) -> None:
    """The finished answer with canonical citations, and the notes on citations repaired or left unmatched."""
    question.refresh_from_db(fields=["first_token_at"])
    question.answer_raw = answer.raw_text
    question.answer_text = answer.text
    question.cannot_answer = answer.cannot_answer
    question.citation_notes = [
        {"written": citation.written, "raw_id": citation.raw_id, "pmid": citation.pmid, "how": citation.how}
        for citation in answer.normalized.citations
        if citation.how in ("repaired", "unmatched")
    ]
    if answer.cancelled:
        question.status = Question.Status.CANCELLED
    question.save(
        update_fields=[
            "answer_text", "answer_raw", "cannot_answer", "citation_notes", "timings_ms", "models_used", "status",
            "updated_at",
        ]
    )  # fmt: skip


def question_cancel(*, question_id: int) -> Question:
    """Ask for the question to stop. A running generation stops at its next check (a quarter of a second), a
    question not yet generating is cancelled on the spot; a finished one is left as it is."""
    with transaction.atomic():
        question = Question.objects.select_for_update().get(pk=question_id)
        if question.finished:
            return question
        question.cancel_requested = True
        fields = ["cancel_requested", "updated_at"]
        # Verification takes seconds and the answer is complete by then: it is left to finish.
        if question.status in (Question.Status.QUEUED, Question.Status.RETRIEVING):
            question.status = Question.Status.CANCELLED
            fields.append("status")
        question.save(update_fields=fields)
    return question


def question_verify(*, question_id: int) -> None:
    question = _enter_stage(question_id, Question.Status.VERIFYING)
    pipeline = _pipeline(question)
    started = time.perf_counter()
    verifier = answer_verifier(pipeline)
    inputs = question_verification_inputs(question)
    results = verifier.verify(inputs.claims, inputs.abstracts, inputs.given)
    _record_timing(question, "verification", started)  # the consensus is timed on its own
    started = time.perf_counter()
    # Made before "done" is written, since the page stops polling then; it never fails the answer.
    consensus = question_consensus_or_none(question=question, verifier=verifier)
    if consensus is not None:
        _record_timing(question, "consensus", started)
    with transaction.atomic():
        question.sentences.all().delete()  # a retried task starts this stage over
        for position, result in enumerate(results):
            sentence = AnswerSentence.objects.create(
                question=question,
                position=position,
                text=result.claim.text,
                display_text=result.claim.display_text,
                verdict=result.verdict,
                confidence=result.confidence,
            )
            CitationVerdict.objects.bulk_create(
                CitationVerdict(
                    sentence=sentence,
                    position=citation_position,
                    pmid=citation.pmid,
                    label=citation.label,
                    confidence=citation.confidence,
                    evidence_sentences=list(citation.evidence),
                    evidence_spans=[list(span) for span in citation.evidence_spans],
                    judge_output=citation.detail,
                    leaning=citation.leaning or "",
                    raw_label=citation.raw_label or "",
                    probabilities=dict(citation.probabilities),
                    raw_probabilities=dict(citation.raw_probabilities),
                )
                for citation_position, citation in enumerate(result.citations)
            )
        question.models_used = {
            **question.models_used,
            "verifier": verifier.classifier.model_id,
            "evidence": verifier.evidence.model_id,
        }
        question.status = Question.Status.DONE
        question.verification_status, question.verification_error = Question.Verification.VERIFIED, ""
        question.consensus = consensus
        question.save(
            update_fields=[
                "status", "verification_status", "verification_error", "consensus", "timings_ms", "models_used",
                "updated_at",
            ]
        )  # fmt: skip


def question_mark_cancelled(*, question_id: int) -> None:
    Question.objects.filter(pk=question_id).exclude(status=Question.Status.DONE).update(
        status=Question.Status.CANCELLED
    )


def question_verification_unavailable(*, question_id: int, reason: str) -> None:
    """The verifier could not run: the answer and its citations stand, done, without verdicts, and say why."""
    # The verify stage writes its verdicts and "done" in one transaction, so a failed attempt left none behind.
    Question.objects.filter(pk=question_id).update(
        status=Question.Status.DONE,
        verification_status=Question.Verification.UNAVAILABLE,
        verification_error=reason[:2000],
        updated_at=timezone.now(),
    )


def question_fail(*, question_id: int, reason: str) -> None:
    Question.objects.filter(pk=question_id).update(status=Question.Status.FAILED, error=reason[:2000])
