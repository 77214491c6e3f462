"""Hybrid retrieval: a BM25 leg and a dense leg run in parallel, with the same filters inside both, then fused.

Fusion is a weighted sum of min-max normalised scores (VerifAI's 0.7 lexical / 0.3 semantic by default) or
reciprocal-rank fusion, which ignores the scores' scales altogether.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from indexer.base import (
    NO_FILTERS,
    AbstractLookup,
    Embedder,
    FusedHit,
    Hit,
    LexicalIndex,
    Reranker,
    SearchFilters,
    VectorIndex,
)
from indexer.query_expansion import candidate_texts, expansion_terms
from indexer.reranking import rerank_hits

Fusion = Literal["weighted", "rrf"]
Mode = Literal["hybrid", "lexical", "semantic"]


class HybridSettings(BaseModel, frozen=True):
    top_k: int = Field(10, ge=1, le=100, description="Abstracts returned after fusion.")
    mode: Mode = Field("hybrid", description="Both legs fused, or one leg alone.")
    fusion: Fusion = Field("weighted", description="Weighted sum of min-max normalised scores, or reciprocal rank.")
    lexical_weight: float = Field(0.7, ge=0, le=1, description="Weight of the normalised BM25 score.")
    semantic_weight: float = Field(0.3, ge=0, le=1, description="Weight of the normalised dense score.")
    rrf_k: int = Field(60, ge=1, le=1000, description="Reciprocal-rank fusion's constant: 1 / (k + rank).")
    candidates_per_leg: int = Field(50, ge=50, le=1000, description="Candidates each leg returns before fusion.")
    # On by default: on BioASQ dev it lifted the default fusion's MAP@10 well past the better single leg's
    # (benchmarks/RESULTS.md, "Retrieval").
    expand_query: bool = Field(
        True,
        description="Pseudo-relevance feedback: the lexical leg searches again with words from its first results.",
    )
    expansion_feedback: int = Field(20, ge=1, le=100, description="Top lexical results the expansion words come from.")
    expansion_terms: int = Field(20, ge=1, le=100, description="Words added to the lexical query.")
    expansion_weight: float = Field(0.8, gt=0, le=1, description="Weight of an added word against the query's own.")
    # Off by default: the reranker trained here lowered the default fusion's MAP@10 on BioASQ dev (0.388 to 0.361
    # with 10 candidates) and costs about 1.5 s a question on two CPU cores.
    rerank: bool = Field(False, description="Re-score the top fused candidates with the trained reranker.")
    rerank_candidates: int = Field(
        10, ge=1, le=100, description="How many of the top fused candidates the reranker re-scores."
    )

    @model_validator(mode="after")
    def _weights_are_usable(self) -> HybridSettings:
        if self.lexical_weight + self.semantic_weight <= 0:
            raise ValueError("at least one leg needs a positive weight")
        return self


def min_max(hits: list[Hit]) -> dict[str, float]:
    """Scores rescaled to [0, 1] within one result list; a list whose scores are all equal maps to 1."""
    if not hits:
        return {}
    low = min(hit.score for hit in hits)
    high = max(hit.score for hit in hits)
    span = high - low
    return {hit.pmid: (hit.score - low) / span if span > 0 else 1.0 for hit in hits}


def reciprocal_ranks(hits: list[Hit], k: int) -> dict[str, float]:
    return {hit.pmid: 1.0 / (k + rank) for rank, hit in enumerate(hits, start=1)}


def fuse(lexical: list[Hit], semantic: list[Hit], settings: HybridSettings) -> list[FusedHit]:
    lexical_norm, semantic_norm = min_max(lexical), min_max(semantic)
    lexical_raw = {hit.pmid: hit.score for hit in lexical}
    semantic_raw = {hit.pmid: hit.score for hit in semantic}
    if settings.fusion == "rrf":
        lexical_rank, semantic_rank = (
            reciprocal_ranks(lexical, settings.rrf_k),
            reciprocal_ranks(semantic, settings.rrf_k),
        )

        def score(pmid: str) -> float:
            return settings.lexical_weight * lexical_rank.get(pmid, 0.0) + settings.semantic_weight * semantic_rank.get(
                pmid, 0.0
            )
    else:

        def score(pmid: str) -> float:
            return settings.lexical_weight * lexical_norm.get(pmid, 0.0) + settings.semantic_weight * semantic_norm.get(
                pmid, 0.0
            )

    fused = [
        FusedHit(
            pmid=pmid,
            score=score(pmid),
            lexical_score=lexical_norm.get(pmid, 0.0),
            semantic_score=semantic_norm.get(pmid, 0.0),
            lexical_raw=lexical_raw.get(pmid),
            semantic_raw=semantic_raw.get(pmid),
        )
        for pmid in lexical_norm.keys() | semantic_norm.keys()
    ]
    # Ties broken by PMID so the same query always gives the same order.
    fused.sort(key=lambda hit: (-hit.score, hit.pmid))
    return fused[: settings.top_k]


def hybrid_search(
    query: str,
    *,
    lexical: LexicalIndex,
    vectors: VectorIndex,
    embedder: Embedder,
    settings: HybridSettings,
    filters: SearchFilters = NO_FILTERS,
    reranker: Reranker | None = None,
    abstracts: AbstractLookup | None = None,
) -> list[FusedHit]:
    """Run the legs the mode needs in parallel (tantivy, the vector engines and torch release the GIL) and fuse.

    `settings.expand_query` expands the lexical query from the words of its first results, which it reads through
    `abstracts`: a caller that gives no lookup (a library user with only the indexes) gets the unexpanded leg;
    with `settings.rerank`, the reranker then re-scores the top `rerank_candidates` (it reads them from
    `abstracts`)."""
    if settings.rerank:
        if reranker is None or abstracts is None:
            raise ValueError("reranking needs a reranker and a way to read the candidates' abstracts")
        wide = settings.model_copy(update={"top_k": max(settings.top_k, settings.rerank_candidates), "rerank": False})
        fused = hybrid_search(
            query, lexical=lexical, vectors=vectors, embedder=embedder, settings=wide, filters=filters,
            abstracts=abstracts,
        )  # fmt: skip
        reranked = rerank_hits(
            query, fused, reranker=reranker, abstracts=abstracts, candidates=settings.rerank_candidates
        )
        return reranked[: settings.top_k]
    limit = max(settings.candidates_per_leg, settings.top_k)
    with ThreadPoolExecutor(max_workers=2) as pool:
        lexical_future = (
            pool.submit(_lexical_leg, query, lexical, limit, filters, settings, abstracts)
            if settings.mode != "semantic"
            else None
        )
        semantic_future = (
            pool.submit(lambda: vectors.search(embedder.embed([query])[0], limit=limit, filters=filters))
            if settings.mode != "lexical"
            else None
        )
        lexical_hits = lexical_future.result() if lexical_future else []
        semantic_hits = semantic_future.result() if semantic_future else []
    return fuse(lexical_hits, semantic_hits, settings)


def candidates_settings(settings: HybridSettings) -> HybridSettings:
    """`settings` returning every fused candidate it ranks (`candidates_per_leg`, or `top_k` when that is more): the
    same legs and the same fusion, so the list starts with the hits `settings` itself returns, in the same order."""
    return settings.model_copy(update={"top_k": max(settings.top_k, settings.candidates_per_leg)})


def dense_closest(hits: Sequence[FusedHit]) -> FusedHit | None:
    """The hit the dense leg found closest to the query (the highest semantic score; the earlier ranked on a tie), or
    None when the dense leg returned none of them. Over `candidates_settings`' list it is the dense leg's first: on
    PubMedQA-kind dev questions, whose abstracts have no title for BM25 to match, that is the question's own abstract
    more often than the closest among the first ten fused (benchmarks/HISTORY.md, "The bottom line")."""
    scored = [hit for hit in hits if hit.semantic_raw is not None]  # None: the dense leg did not return it
    return max(scored, key=lambda hit: hit.semantic_score, default=None)


# The candidates whose words give the expansion words their document frequencies (as measured on BioASQ dev).
EXPANSION_CANDIDATES = 100


def _lexical_leg(
    query: str,
    lexical: LexicalIndex,
    limit: int,
    filters: SearchFilters,
    settings: HybridSettings,
    abstracts: AbstractLookup | None,
) -> list[Hit]:
    if not settings.expand_query or abstracts is None:
        return lexical.search(query, limit=limit, filters=filters)
    first = lexical.search(query, limit=max(limit, EXPANSION_CANDIDATES), filters=filters)
    pmids = [hit.pmid for hit in first]
    expansion = expansion_terms(
        query,
        candidate_texts(pmids, abstracts(pmids)),
        feedback=settings.expansion_feedback,
        terms=settings.expansion_terms,
        weight=settings.expansion_weight,
    )
    if not expansion:
        return first[:limit]
    return lexical.search(query, limit=limit, filters=filters, expansion=expansion)
