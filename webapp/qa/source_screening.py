"""What a question's source settings do to its fused search results: retracted papers left out unless asked for,
and stronger study designs first when asked.

Done after the search rather than inside the indexes: neither index stores a retraction status or a design, and a
paper's status changes (retracted years later) without its text changing, which would otherwise mean re-indexing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from indexer.base import FusedHit
from indexer.hybrid import candidates_settings, dense_closest, hybrid_search
from indexer.study_design import article_study_design, design_strength
from webapp.corpus import engines
from webapp.corpus.models import Article
from webapp.library.sources import library_search
from webapp.qa.pipeline import PipelineSettings

# HybridSettings' own bound on top_k: an over-fetch never asks for more.
MAX_FETCH = 100


@dataclass(frozen=True)
class FoundSources:
    hits: list[FusedHit]  # the question's sources, ranked
    # The PubMed candidate the dense search found closest to the question, not retracted, wherever fusion ranked it
    # (`indexer.hybrid.dense_closest`): a yes/no question's consensus reads it beside the first sources. None when
    # PubMed was not searched or the dense leg returned nothing.
    closest: FusedHit | None


def sources_search(*, query: str, pipeline: PipelineSettings, owner_id: int | None = None) -> list[FusedHit]:
    """A question's sources as the retrieve stage finds them: the hybrid search with its settings, then screened;
    with `sources` naming the library, the pages of `owner_id`'s own library too (none without an owner)."""
    return found_sources(query=query, pipeline=pipeline, owner_id=owner_id).hits


def found_sources(*, query: str, pipeline: PipelineSettings, owner_id: int | None = None) -> FoundSources:
    """`sources_search`'s sources, and the PubMed candidate the dense search found closest. One search gives both:
    it returns every fused candidate (`candidates_settings`), whose first `top_k` are the narrower search's hits."""
    scope, top_k = pipeline.filters.sources, pipeline.retrieval.top_k
    pubmed: list[FusedHit] = []
    closest = None
    if scope != "library":
        candidates = _search(query, pipeline, top_k=candidates_settings(pipeline.retrieval).top_k)
        pubmed = screened_hits(query=query, hits=candidates[:top_k], pipeline=pipeline)
        retracted = retracted_pmids(pmids=[hit.pmid for hit in candidates])
        closest = dense_closest([hit for hit in candidates if hit.pmid not in retracted])
    if scope == "pubmed" or owner_id is None:
        return FoundSources(hits=pubmed, closest=closest)
    library = library_search(query=query, owner_id=owner_id, settings=pipeline.retrieval, top_k=top_k)
    return FoundSources(hits=taking_turns(pubmed, library)[:top_k], closest=closest)


def taking_turns(first: Sequence[FusedHit], second: Sequence[FusedHit]) -> list[FusedHit]:
    """Both lists in their own order, one hit from each in turn: scores from two indexes (PubMed's, the library's)
    are not on one scale, so neither list's order is trusted to place the other's hits."""
    merged: list[FusedHit] = []
    for index in range(max(len(first), len(second))):
        merged += [hits[index] for hits in (first, second) if index < len(hits)]
    return merged


def screened_hits(*, query: str, hits: Sequence[FusedHit], pipeline: PipelineSettings) -> list[FusedHit]:
    """`hits` (the search for `query` with `pipeline`'s settings) as the question's sources."""
    screened = list(hits)
    if not pipeline.filters.include_retracted:
        screened = _without_retracted(query, screened, pipeline)
    if pipeline.filters.prefer_stronger_designs:
        screened = _stronger_designs_first(screened)
    return screened


def retracted_pmids(*, pmids: Sequence[str]) -> set[str]:
    return set(
        Article.objects.filter(pmid__in=list(pmids), retraction_status=Article.Retraction.RETRACTED).values_list(
            "pmid", flat=True
        )
    )


def _without_retracted(query: str, hits: list[FusedHit], pipeline: PipelineSettings) -> list[FusedHit]:
    """The top_k hits that are not retracted: the search is run again asking for as many more as were retracted,
    until enough are left or the search has no more to give."""
    wanted = fetched = pipeline.retrieval.top_k
    while True:
        retracted = retracted_pmids(pmids=[hit.pmid for hit in hits])
        kept = [hit for hit in hits if hit.pmid not in retracted]
        if len(kept) >= wanted or len(hits) < fetched or fetched >= MAX_FETCH:
            return kept[:wanted]
        # Fusion ranks the same candidates whatever top_k is, so the wider list starts with the narrower one.
        fetched = min(wanted + len(retracted), MAX_FETCH)
        hits = _search(query, pipeline, top_k=fetched)


def _search(query: str, pipeline: PipelineSettings, *, top_k: int) -> list[FusedHit]:
    rerank = pipeline.retrieval.rerank
    reads_abstracts = rerank or pipeline.retrieval.expand_query
    return hybrid_search(
        query,
        lexical=engines.lexical_index(),
        vectors=engines.vector_index(),
        embedder=engines.embedder(),
        settings=pipeline.retrieval.model_copy(update={"top_k": top_k}),
        filters=pipeline.filters.search_filters(),
        # Loaded only where a search asks for it: the retrieve stage, on the llm queue's worker.
        reranker=engines.reranker() if rerank else None,
        abstracts=stored_abstracts if reads_abstracts else None,
    )


def stored_abstracts(pmids: Sequence[str]) -> dict[str, tuple[str, str]]:
    """Title and abstract of the stored articles among `pmids`: what the reranker and the query expansion read."""
    rows = Article.objects.filter(pmid__in=list(pmids)).values_list("pmid", "title", "abstract")
    return {pmid: (title, abstract) for pmid, title, abstract in rows}


def _stronger_designs_first(hits: list[FusedHit]) -> list[FusedHit]:
    articles = Article.objects.only("pmid", "publication_types", "mesh").in_bulk(
        [hit.pmid for hit in hits], field_name="pmid"
    )
    strength = {
        pmid: design_strength(article_study_design(publication_types=article.publication_types, mesh=article.mesh))
        for pmid, article in articles.items()
    }
    # sorted() is stable: within one design the search's own order stands.
    return sorted(hits, key=lambda hit: -strength.get(hit.pmid, 0))
