"""A deep check's search: a claim searched for as the question's sources were, as the retrieve stage searches.

What it runs with (the question's own search settings, the language model and verifier the site runs now) is
webapp.qa.pipeline.pipeline_rereading's, as for a re-check."""

from __future__ import annotations

from verifier.verify import CitedAbstract
from webapp.qa.pipeline import PipelineSettings
from webapp.qa.source_screening import MAX_FETCH, sources_search
from webapp.qa.verification import cited_abstracts


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
