"""The library's own pair of indexes, apart from PubMed's: not tied to an index generation (a PubMed rebuild leaves
researchers' passages where they are), and opened as library indexes, which hold only owned passages and refuse any
search that does not name its owner (indexer/ownership.py).

The embedded profile's vector shard admits one process, as PubMed's does: the worker, which indexes and (for
questions) searches the library; the site never opens it.
"""

from __future__ import annotations

import threading

from django.conf import settings

from indexer.base import LexicalIndex, LexicalOptions, VectorIndex, VectorOptions
from indexer.registry import build_lexical_index, build_vector_index
from webapp.corpus.engines import embedder_dimension

_lock = threading.Lock()
_lexical: list[LexicalIndex] = []  # at most one each, opened on first use
_vectors: list[VectorIndex] = []


def library_lexical_options() -> LexicalOptions:
    engines = settings.VERIMED.engines
    return LexicalOptions(
        backend=engines.lexical_backend,
        owned=True,
        folder=settings.VERIMED.paths.index_dir / "library-tantivy",
        url=engines.opensearch_url,
        index=f"{engines.opensearch_index}-library",
    )


def library_vector_options(*, dimension: int = 0) -> VectorOptions:
    """`dimension` matters only to open the index; where it lives (what a restore clears) does not depend on it."""
    engines = settings.VERIMED.engines
    return VectorOptions(
        backend=engines.vector_backend,
        dimension=dimension,
        owned=True,
        folder=settings.VERIMED.paths.index_dir / "library-qdrant_edge",
        url=library_qdrant_location(engines.qdrant_url),
        collection=f"{engines.qdrant_collection}-library",
        api_key=engines.qdrant_api_key,
    )


def library_lexical_index() -> LexicalIndex:
    with _lock:
        if not _lexical:
            _lexical.append(build_lexical_index(library_lexical_options()))
        return _lexical[0]


def library_vector_index() -> VectorIndex:
    dimension = embedder_dimension()  # loads the embedder outside the lock: it can take seconds
    with _lock:
        if not _vectors:
            _vectors.append(build_vector_index(library_vector_options(dimension=dimension)))
        return _vectors[0]


def library_qdrant_location(url: str) -> str:
    """A Qdrant server holds the library's collection beside PubMed's. qdrant-client's local mode (a folder) admits one
    client per folder, even within one process, and the worker has PubMed's open there already: the library's
    collection gets a folder of its own beside it."""
    if url.startswith(("http://", "https://")) or url == ":memory:":
        return url
    return f"{url.rstrip('/')}-library"


def release_library_engines() -> None:
    """Close both (the embedded vector shard is locked by whichever process holds it open)."""
    with _lock:
        for lexical in _lexical:
            lexical.close()
        for vectors in _vectors:
            vectors.close()
        _lexical.clear()
        _vectors.clear()
