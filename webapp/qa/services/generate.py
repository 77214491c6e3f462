"""The second stage: pack the focused abstracts into the model's window, stream the model's answer onto the row the
page polls (stopping when the question is cancelled), and store it with its canonical citations."""

from __future__ import annotations

import logging
import time
from typing import Any

from django.utils import timezone

from generator.context_focus import packed_context
from generator.errors import GenerationError
from generator.generate import GeneratedAnswer, generate_answer
from generator.packing import PackedContext
from generator.prompts import CANNOT_ANSWER
from verifier.claim_rewriting import is_yes_no_question
from webapp.qa.consensus import bottom_line_rule, question_consensus_or_none
from webapp.qa.context import generation_context
from webapp.qa.llm import closest_abstract_reader, llm_for, token_counter_for
from webapp.qa.models import Question
from webapp.qa.pipeline import PipelineSettings
from webapp.qa.services.stages import stage_enter, stage_pipeline, stage_record_timing
from webapp.qa.verification import answer_verifier

logger = logging.getLogger(__name__)

# How often streamed tokens are written to the row the page polls: often enough to look live, rarely enough
# that SQLite is not written for every token.
STREAM_FLUSH_SECONDS = 0.25


def question_generate(*, question_id: int) -> None:
    question = stage_enter(question_id, Question.Status.GENERATING)
    question.answer_text = question.answer_raw = ""
    question.save(update_fields=["answer_text", "answer_raw", "updated_at"])
    pipeline = stage_pipeline(question)
    packed = _packed_prompt(question, pipeline)
    if packed is None:
        return
    answer = _streamed_answer(question, pipeline, packed)
    _store_answer(question, answer)


def _packed_prompt(question: Question, pipeline: PipelineSettings) -> PackedContext | None:
    """The focused abstracts packed into the model's window, recorded on the question; None when nothing was
    retrieved, in which case the question is answered "cannot answer" on the spot."""
    options = pipeline.generation
    bottom_line = _bottom_line_first(question, pipeline)  # timed as "consensus", as after the answer
    started = time.perf_counter()
    context = generation_context(question, pipeline)
    if not context:
        stage_record_timing(question, "context", started)
        question.answer_text, question.cannot_answer = CANNOT_ANSWER, True
        question.context = {"given": [], "trimmed": [], "dropped": []}
        question.save(update_fields=["answer_text", "cannot_answer", "context", "timings_ms", "updated_at"])
        return None
    packed = packed_context(
        question.text, context, options, counter=token_counter_for(pipeline), bottom_line=bottom_line
    )
    stage_record_timing(question, "context", started)
    question.context = {
        "given": [item.pmid for item in packed.abstracts],
        "trimmed": list(packed.trimmed),
        "dropped": list(packed.dropped),
        "prompt_tokens": packed.prompt_tokens,
        "budget_tokens": packed.budget_tokens,
        "prompt_style": options.prompt_style,
        # The bottom line the answer was asked to open with (null: none was given); the verify stage then completes
        # that consensus with the written answer's stance instead of reading the abstracts again.
        "bottom_line_first": bottom_line,
    }
    if not packed.abstracts:
        raise GenerationError(
            f"The question and the answer's room ({options.max_tokens} tokens) leave no space for any abstract in "
            f"the model's {options.context_tokens}-token window."
        )
    question.save(update_fields=["context", "timings_ms", "updated_at"])
    return packed


def _bottom_line_first(question: Question, pipeline: PipelineSettings) -> str | None:
    """A yes/no question's bottom line, decided before the answer is written and stored with its consensus (the page
    shows it while the answer streams); None for any other question, when the setting is off, or when no bottom line
    could be made (the verify stage then makes the consensus after the answer, as before)."""
    if not pipeline.generation.bottom_line_first or not is_yes_no_question(question.text):
        return None
    started = time.perf_counter()
    try:
        rule = bottom_line_rule(pipeline.verification.verifier_model)
        verifier = answer_verifier(pipeline)
    except Exception:
        # A verifier that cannot load (a missing checkpoint) must not cost the answer: the verify stage says so.
        logger.exception("question %s: no bottom line before the answer; the verifier could not load", question.pk)
        return None
    consensus = question_consensus_or_none(
        question=question,
        verifier=verifier,
        rule=rule,
        read_model=closest_abstract_reader(pipeline, rule),
    )
    line = (consensus or {}).get("bottom_line")
    if not line:
        return None
    stage_record_timing(question, "consensus", started)
    question.consensus = consensus
    question.save(update_fields=["consensus", "timings_ms", "updated_at"])
    return str(line["answer"])


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
    stage_record_timing(
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
