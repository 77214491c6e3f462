"""The first stage: search the index for the question's sources (retracted papers out, stronger designs first) and
store the hits, ranked."""

from __future__ import annotations

import time

from django.db import transaction
from django.utils import timezone

from webapp.corpus import engines
from webapp.corpus.services.background_embedding import semantic_coverage
from webapp.qa.models import Question, RetrievedDocument
from webapp.qa.services.stages import stage_enter, stage_pipeline, stage_record_timing
from webapp.qa.source_screening import found_sources


def question_retrieve(*, question_id: int) -> None:
    question = stage_enter(question_id, Question.Status.RETRIEVING)
    # The wait for a worker, from the question's creation to its search starting (on a retried search, to the try
    # that stored its hits): the page's first bar.
    queued_ms = round((timezone.now() - question.created_at).total_seconds() * 1000, 1)
    pipeline = stage_pipeline(question)
    started = time.perf_counter()
    # Retracted out, designs ordered; the asker's own library too when the question's settings say so.
    found = found_sources(query=question.text, pipeline=pipeline, owner_id=question.user_id)
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
            for rank, hit in enumerate(found.hits, start=1)
        )
        stage_record_timing(question, "retrieval", started, queue=queued_ms)
        question.models_used = {**question.models_used, "embedding": engines.embedder().model_id}
        question.semantic_coverage = semantic_coverage().share
        question.closest_candidate = (
            {"pmid": found.closest.pmid, "semantic_score": found.closest.semantic_score} if found.closest else None
        )
        question.save(
            update_fields=["timings_ms", "models_used", "semantic_coverage", "closest_candidate", "updated_at"]
        )
