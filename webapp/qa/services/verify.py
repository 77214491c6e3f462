"""The third stage: check each cited sentence against the abstracts it cites, make a yes/no question's consensus,
and store the verdicts with "done" in one transaction."""

from __future__ import annotations

import time
from typing import Any

from django.db import transaction

from generator.answer_model_stance import answer_model_stance
from webapp.qa.consensus import bottom_line_rule, question_consensus_or_none, with_the_answers_stance
from webapp.qa.llm import closest_abstract_reader, llm_for
from webapp.qa.models import AnswerSentence, CitationVerdict, Question
from webapp.qa.services.stages import stage_enter, stage_pipeline, stage_record_timing
from webapp.qa.verification import answer_verifier, question_verification_inputs


def question_verify(*, question_id: int) -> None:
    question = stage_enter(question_id, Question.Status.VERIFYING)
    pipeline = stage_pipeline(question)
    started = time.perf_counter()
    verifier = answer_verifier(pipeline)
    inputs = question_verification_inputs(question)
    results = verifier.verify(inputs.claims, inputs.abstracts, inputs.given)
    stage_record_timing(question, "verification", started)  # the consensus is timed on its own
    started = time.perf_counter()
    # Made before "done" is written, since the page stops polling then; it never fails the answer.
    rule = bottom_line_rule(pipeline.verification.verifier_model)
    answer_text = " ".join(claim.display_text for claim in inputs.claims)

    def read_answer_stance() -> str | None:
        # The disagreement check's second reader: the answer model on its own answer (its opening word, mostly).
        return answer_model_stance(llm_for(pipeline), question.text, answer_text)

    consensus: dict[str, Any] | None
    if question.context.get("bottom_line_first") and question.consensus and not rule.stance_weight:
        # Made before the answer and given to the model; the rule does not weigh the answer's stance, so only what
        # the answer says is added.
        consensus = with_the_answers_stance(
            question.consensus,
            question=question,
            verifier=verifier,
            answer_text=answer_text,
            read_answer_stance=read_answer_stance,
        )
        stage_record_timing(question, "answer_stance", started)
    else:
        consensus = question_consensus_or_none(
            question=question,
            verifier=verifier,
            rule=rule,
            answer_text=answer_text,
            read_model=closest_abstract_reader(pipeline, rule),
            read_answer_stance=read_answer_stance,
        )
        if consensus is not None:
            stage_record_timing(question, "consensus", started)
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
