"""The configured search engines and embedder, built once per process and only when first needed."""

from __future__ import annotations

from functools import cache

from django.conf import settings

from indexer.base import Embedder, LexicalIndex, VectorIndex
from indexer.embedder import SentenceTransformerEmbedder


@cache
def embedder() -> Embedder:
    return SentenceTransformerEmbedder(settings.VERIMED_EMBEDDING_MODEL, threads=settings.VERIMED_TORCH_THREADS)


@cache
def lexical_index() -> LexicalIndex:
    backend = settings.VERIMED_LEXICAL_BACKEND
    if backend == "tantivy":
        from indexer.tantivy_index import TantivyIndex

        return TantivyIndex(settings.VERIMED_INDEX_DIR / "tantivy")
    raise ValueError(f"unknown VERIMED_LEXICAL_BACKEND {backend!r} (available: tantivy)")


@cache
def vector_index() -> VectorIndex:
    backend = settings.VERIMED_VECTOR_BACKEND
    if backend == "qdrant_edge":
        from indexer.qdrant_edge_index import QdrantEdgeIndex

        # MiniLM's width; another model must match the dimension the shard was created with.
        return QdrantEdgeIndex(settings.VERIMED_INDEX_DIR / "qdrant_edge", dimension=embedder_dimension())
    raise ValueError(f"unknown VERIMED_VECTOR_BACKEND {backend!r} (available: qdrant_edge)")


def embedder_dimension() -> int:
    model = embedder()
    if not model.dimension and isinstance(model, SentenceTransformerEmbedder):
        model.warm_up()
    return model.dimension


def warm_up() -> None:
    """Load the embedder and open both indexes now, so the first question does not pay for it."""
    embedder().embed(["warm up"])
    lexical_index().count()
    vector_index().count()


def release_engines() -> None:
    """Close the engines (the vector shard is locked by whichever process holds it open)."""
    if vector_index.cache_info().currsize:
        vector_index().close()
    if lexical_index.cache_info().currsize:
        lexical_index().close()
    vector_index.cache_clear()
    lexical_index.cache_clear()
