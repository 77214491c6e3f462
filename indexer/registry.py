"""The indexer's adapters by setting value: lexical indexes, vector indexes and embedders, keyed by `backend`.

Each backend's module is imported only when a setting chooses it, so a process that never embeds never imports
sentence-transformers (nor torch) and one on the embedded profile never imports the OpenSearch or Qdrant clients.
An embedder is built without loading its model (that happens on first use).
"""

from __future__ import annotations

from operator import attrgetter

from indexer.adapter_registry import AdapterRegistry
from indexer.base import Embedder, EmbedderOptions, LexicalIndex, LexicalOptions, VectorIndex, VectorOptions

_BACKEND = attrgetter("backend")
_SENTENCE_TRANSFORMERS = "indexer.embedder:SentenceTransformerEmbedder.from_options"

LEXICAL_INDEXES: AdapterRegistry[LexicalOptions, LexicalIndex] = AdapterRegistry(
    "lexical backend",
    {
        "tantivy": "indexer.tantivy_index:TantivyIndex.from_options",
        "opensearch": "indexer.opensearch_index:OpenSearchIndex.from_options",
    },
    key=_BACKEND,
)
VECTOR_INDEXES: AdapterRegistry[VectorOptions, VectorIndex] = AdapterRegistry(
    "vector backend",
    {
        "qdrant_edge": "indexer.qdrant_edge_index:QdrantEdgeIndex.from_options",
        "qdrant": "indexer.qdrant_client_index:QdrantClientIndex.from_options",
    },
    key=_BACKEND,
)
EMBEDDERS: AdapterRegistry[EmbedderOptions, Embedder] = AdapterRegistry(
    "embedding backend",
    {
        "torch": _SENTENCE_TRANSFORMERS,
        "onnx": _SENTENCE_TRANSFORMERS,
        "onnx-int8": _SENTENCE_TRANSFORMERS,
        "fake": "indexer.fake_embedder:FakeEmbedder.from_options",
    },
    key=_BACKEND,
)

build_lexical_index = LEXICAL_INDEXES.build
build_vector_index = VECTOR_INDEXES.build
build_embedder = EMBEDDERS.build
