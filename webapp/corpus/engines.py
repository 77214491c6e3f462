"""The configured search engines and embedder, built once per process and generation, only when first needed.

`lexical_index()` and `vector_index()` answer with the engines of the active generation (see generations.py):
when a rebuild switches generation, the next call closes the old engines and opens the new ones.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable
from functools import cache
from pathlib import Path

from django.conf import settings

from indexer.base import (
    Embedder,
    EmbedderOptions,
    LexicalIndex,
    LexicalOptions,
    Reranker,
    VectorIndex,
    VectorOptions,
)
from indexer.registry import build_embedder, build_lexical_index, build_vector_index
from indexer.reranker import CrossEncoderReranker
from webapp.corpus.services.generations import active_generation

_lock = threading.RLock()
_open_generation: str | None = None
_lexical: dict[str, LexicalIndex] = {}
_vectors: dict[str, VectorIndex] = {}


@cache
def embedder() -> Embedder:
    return build_embedder(
        EmbedderOptions(
            backend=settings.VERIMED.engines.embedding_backend,
            model=settings.VERIMED.engines.embedding_model,
            threads=settings.VERIMED.engines.torch_threads,
            cache_dir=settings.VERIMED.paths.model_cache,
        )
    )


def lexical_index_for(generation: str) -> LexicalIndex:
    with _lock:
        if generation not in _lexical:
            _lexical[generation] = _build_lexical(generation)
        return _lexical[generation]


def vector_index_for(generation: str) -> VectorIndex:
    with _lock:
        if generation not in _vectors:
            _vectors[generation] = _build_vectors(generation)
        return _vectors[generation]


def _build_lexical(generation: str) -> LexicalIndex:
    # Each generation is an index of its own: a folder beside the others, or an index name with the generation.
    return build_lexical_index(
        LexicalOptions(
            backend=settings.VERIMED.engines.lexical_backend,
            folder=settings.VERIMED.paths.index_dir / f"tantivy-{generation}",
            url=settings.VERIMED.engines.opensearch_url,
            index=f"{settings.VERIMED.engines.opensearch_index}-{generation}",
        )
    )


def _build_vectors(generation: str) -> VectorIndex:
    return build_vector_index(
        VectorOptions(
            backend=settings.VERIMED.engines.vector_backend,
            dimension=embedder_dimension(),
            folder=settings.VERIMED.paths.index_dir / f"qdrant_edge-{generation}",
            url=settings.VERIMED.engines.qdrant_url,
            collection=f"{settings.VERIMED.engines.qdrant_collection}-{generation}",
            api_key=settings.VERIMED.engines.qdrant_api_key,
        )
    )


def _follow_active_generation() -> str:
    """The active generation; engines of a generation this process left behind are closed first."""
    global _open_generation
    generation = active_generation()
    with _lock:
        if _open_generation is not None and _open_generation != generation:
            release_engines()
        _open_generation = generation
    return generation


def lexical_index() -> LexicalIndex:
    return lexical_index_for(_follow_active_generation())


def vector_index() -> VectorIndex:
    return vector_index_for(_follow_active_generation())


@cache
def reranker() -> Reranker:
    """Loaded by the first search that asks to rerank (off by default: on BioASQ dev it lowered MAP@10), never at
    worker start."""
    return CrossEncoderReranker(
        Path(settings.VERIMED.engines.reranker_model),
        backend=settings.VERIMED.engines.reranker_backend,
        cache_dir=settings.VERIMED.paths.model_cache,
        threads=settings.VERIMED.engines.torch_threads,
    )


def embedder_dimension() -> int:
    model = embedder()
    # A model other than the packaged one tells its dimension once loaded: embedding one text loads it.
    return model.dimension or int(model.embed(["dimension"]).shape[1])


# What the tasks routed to each queue (settings.CELERY_TASK_ROUTES) open: storing writes both indexes, embedding
# needs the model and the vectors, retrieval all three; verification and Celery's own queue need none of them.
ENGINES_BY_QUEUE: dict[str, frozenset[str]] = {
    "ingest": frozenset({"lexical", "vectors"}),
    "embed": frozenset({"embedder", "vectors"}),
    "llm": frozenset({"embedder", "lexical", "vectors"}),
}
ALL_ENGINES = frozenset({"embedder", "lexical", "vectors"})


def engines_for_queues(queues: Iterable[str]) -> frozenset[str]:
    """The engines a worker consuming `queues` will open. A verify worker holds no index (nor, with an embedded
    vector index, the lock only one process may hold) and no embedding model; an ingest worker does not embed, though
    opening the vector index still reads the model's dimension."""
    return frozenset().union(*(ENGINES_BY_QUEUE.get(queue, frozenset()) for queue in queues))


def warm_up(parts: Collection[str] = ALL_ENGINES) -> None:
    """Load the embedder and open the indexes named in `parts` now, so the first task does not pay for it."""
    if "embedder" in parts:
        embedder().embed(["warm up"])
    if "lexical" in parts:
        lexical_index().count()
    if "vectors" in parts:
        vector_index().count()


def release_engines() -> None:
    """Close every open engine (the vector shard is locked by whichever process holds it open)."""
    with _lock:
        for vectors in _vectors.values():
            vectors.close()
        for lexical in _lexical.values():
            lexical.close()
        _vectors.clear()
        _lexical.clear()


def release_generation(generation: str) -> None:
    """Close one generation's engines in this process (a rebuild hands the new folders over to the worker)."""
    with _lock:
        if generation in _vectors:
            _vectors.pop(generation).close()
        if generation in _lexical:
            _lexical.pop(generation).close()


def lexical_count(generation: str) -> int:
    """Documents in a generation's lexical index, opened only for the count when this process has not opened it
    (tantivy allows readers beside the worker's writer; OpenSearch is a server)."""
    with _lock:
        if generation in _lexical:
            return _lexical[generation].count()
    index = _build_lexical(generation)
    try:
        return index.count()
    finally:
        index.close()


def vector_count(generation: str) -> int | None:
    """Points in a generation's vector index; None when only the process holding it may open it.

    The embedded qdrant-edge shard and qdrant-client's local mode admit one process, the worker: a page that
    opened them would lock the worker out, so only a Qdrant server is opened here just to count.
    """
    with _lock:
        if generation in _vectors:
            return _vectors[generation].count()
    server = settings.VERIMED.engines.vector_backend == "qdrant" and settings.VERIMED.engines.qdrant_url.startswith(
        ("http:", "https:")
    )
    if not server:
        return None
    index = _build_vectors(generation)
    try:
        return index.count()
    finally:
        index.close()
