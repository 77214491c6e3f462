"""What a deep check runs with: the question's own search settings (its claims are searched for as its sources were),
the language model and verifier the site runs now, and the search itself, as the retrieve stage makes it."""

from __future__ import annotations

from pydantic import ValidationError

from verifier.verify import CitedAbstract
from webapp.qa.models import Question
from webapp.qa.pipeline import PipelineSettings, default_pipeline_settings
from webapp.qa.source_screening import MAX_FETCH, sources_search
from webapp.qa.verification import cited_abstracts


def deep_check_pipeline(question: Question) -> PipelineSettings:
    site = default_pipeline_settings()
    try:
        stored = PipelineSettings.model_validate(question.settings)
    except ValidationError:  # rows made by hand, or settings whose fields have changed since
        return site
    return stored.model_copy(
        update={
            "verification": site.verification,
            "llm_model": site.llm_model,
            "llm_base_url": site.llm_base_url,
            "llm_server_kind": site.llm_server_kind,
        }
    )


class HybridClaimSearch:
    """A claim's own search: the retrieve stage's hybrid search with the question's settings (retracted papers left
    out unless the question kept them), the claim as the query, the stored abstracts of what it finds."""

    def __init__(self, pipeline: PipelineSettings) -> None:
        self.pipeline = pipeline

    def __call__(self, query: str, *, limit: int) -> list[CitedAbstract]:
        retrieval = self.pipeline.retrieval.model_copy(update={"top_k": max(1, min(limit, MAX_FETCH))})
        hits = sources_search(query=query, pipeline=self.pipeline.model_copy(update={"retrieval": retrieval}))
        abstracts = cited_abstracts(pmids=[hit.pmid for hit in hits])
        return [abstracts[hit.pmid] for hit in hits if hit.pmid in abstracts]
