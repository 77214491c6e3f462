"""Hybrid retrieval: a BM25 leg and a dense leg, each min-max normalised, fused by a weighted sum."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from pydantic import BaseModel, Field, model_validator

from indexer.base import Embedder, Hit, LexicalIndex, VectorIndex


class HybridSettings(BaseModel, frozen=True):
    top_k: int = Field(10, ge=1, le=100, description="Abstracts returned after fusion.")
    lexical_weight: float = Field(0.7, ge=0, le=1, description="Weight of the normalised BM25 score.")
    semantic_weight: float = Field(0.3, ge=0, le=1, description="Weight of the normalised dense score.")
    candidates_per_leg: int = Field(50, ge=1, le=1000, description="Candidates each leg returns before fusion.")

    @model_validator(mode="after")
    def _weights_are_usable(self) -> HybridSettings:
        if self.lexical_weight + self.semantic_weight <= 0:
            raise ValueError("at least one leg needs a positive weight")
        return self


@dataclass(frozen=True)
class FusedHit:
    pmid: str
    score: float
    lexical_score: float  # min-max normalised, 0 when the lexical leg did not return the PMID
    semantic_score: float
    lexical_raw: float | None
    semantic_raw: float | None


def min_max(hits: list[Hit]) -> dict[str, float]:
    """Scores rescaled to [0, 1] within one result list; a list whose scores are all equal maps to 1."""
    if not hits:
        return {}
    low = min(hit.score for hit in hits)
    high = max(hit.score for hit in hits)
    span = high - low
    return {hit.pmid: (hit.score - low) / span if span > 0 else 1.0 for hit in hits}


def fuse(lexical: list[Hit], semantic: list[Hit], settings: HybridSettings) -> list[FusedHit]:
    lexical_norm, semantic_norm = min_max(lexical), min_max(semantic)
    lexical_raw = {hit.pmid: hit.score for hit in lexical}
    semantic_raw = {hit.pmid: hit.score for hit in semantic}
    fused = [
        FusedHit(
            pmid=pmid,
            score=settings.lexical_weight * lexical_norm.get(pmid, 0.0)
            + settings.semantic_weight * semantic_norm.get(pmid, 0.0),
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
) -> list[FusedHit]:
    """Run both legs in parallel (tantivy and the vector engine release the GIL) and fuse them."""
    limit = settings.candidates_per_leg
    with ThreadPoolExecutor(max_workers=2) as pool:
        lexical_future = pool.submit(lexical.search, query, limit=limit)
        semantic_future = pool.submit(lambda: vectors.search(embedder.embed([query])[0], limit=limit))
        return fuse(lexical_future.result(), semantic_future.result(), settings)
