"""A throw-away tantivy + qdrant-edge pair over an evaluation corpus, built the way ingestion builds the real one
(same chunker, same engines), reused between runs over the same documents and embedding model."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from indexer.base import Embedder
from indexer.chunking import Chunker
from indexer.ingest import IngestReport, embed_records, timed
from indexer.qdrant_edge_index import QdrantEdgeIndex
from indexer.records import ArticleRecord
from indexer.tantivy_index import TantivyIndex

_BATCH = 256


@dataclass
class EvaluationIndex:
    lexical: TantivyIndex
    vectors: QdrantEdgeIndex
    articles: dict[str, ArticleRecord]
    # Seconds per stage for this build; empty when the index was reused.
    seconds: dict[str, float] = field(default_factory=dict)
    chunks: int = 0

    def close(self) -> None:
        self.vectors.close()
        self.lexical.close()


def _fingerprint(records: Sequence[ArticleRecord], embedder: Embedder) -> str:
    digest = hashlib.sha256(embedder.model_id.encode())
    # The same model run by another backend (torch, onnx, onnx-int8) gives slightly different vectors: measuring one
    # backend must never reuse an index another one built.
    digest.update(str(getattr(embedder, "backend", "")).encode())
    for record in records:
        digest.update(record.pmid.encode())
        digest.update(record.text.encode())
    return digest.hexdigest()


def build_evaluation_index(records: Sequence[ArticleRecord], directory: Path, embedder: Embedder) -> EvaluationIndex:
    """Index the records, or reuse the index a previous run built from the same texts with the same model."""
    articles = {record.pmid: record for record in records}
    ordered = list(articles.values())
    stamp = directory / "fingerprint.json"
    fingerprint = _fingerprint(ordered, embedder)
    fresh = not stamp.exists() or json.loads(stamp.read_text()).get("fingerprint") != fingerprint
    if fresh and directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True, exist_ok=True)
    lexical = TantivyIndex(directory / "tantivy")
    vectors = QdrantEdgeIndex(directory / "qdrant_edge", dimension=len(embedder.embed(["dimension"])[0]))
    index = EvaluationIndex(lexical=lexical, vectors=vectors, articles=articles)
    if not fresh:
        index.chunks = json.loads(stamp.read_text()).get("chunks", 0)
        return index
    report = IngestReport()
    chunker = Chunker(embedder.token_lengths, max_tokens=embedder.max_tokens)
    for start in range(0, len(ordered), _BATCH):
        batch = ordered[start : start + _BATCH]
        with timed(report, "lexical"):
            lexical.add(batch)
        embed_records(batch, chunker=chunker, embedder=embedder, vectors=vectors, report=report)
    with timed(report, "vector"):
        vectors.optimize()
    index.chunks = report.chunks
    index.seconds = {stage: report.seconds[stage] for stage in ("lexical", "chunk", "embed", "vector")}
    stamp.write_text(json.dumps({"fingerprint": fingerprint, "chunks": index.chunks}))
    return index
