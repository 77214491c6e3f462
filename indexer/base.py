"""The roles an index backend plays, as Protocols every adapter implements."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from indexer.records import ArticleRecord

Vectors = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Hit:
    """One document a single search leg returned, with that leg's raw score."""

    pmid: str
    score: float


class LexicalIndex(Protocol):
    """A BM25 full-text index over title + abstract."""

    def add(self, records: Sequence[ArticleRecord]) -> None:
        """Index records, replacing any document with the same PMID."""

    def delete(self, pmids: Sequence[str]) -> None: ...

    def search(self, query: str, *, limit: int) -> list[Hit]: ...

    def count(self) -> int: ...

    def close(self) -> None: ...


class VectorIndex(Protocol):
    """A dense-vector nearest-neighbour index keyed by PMID."""

    def upsert(self, pmids: Sequence[str], vectors: Vectors) -> None: ...

    def delete(self, pmids: Sequence[str]) -> None: ...

    def search(self, vector: Vectors, *, limit: int) -> list[Hit]: ...

    def count(self) -> int: ...

    def optimize(self) -> None:
        """Build the ANN structures (HNSW, quantisation) after a bulk load."""

    def close(self) -> None: ...


class Embedder(Protocol):
    """Turns texts into L2-normalised vectors."""

    model_id: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> Vectors: ...
