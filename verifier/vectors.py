"""Embeddings of claims and abstract sentences, computed once in large batches and looked up by text."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from indexer.base import Embedder
from indexer.sentence_selection import rank_sentences
from verifier.datasets import ClaimDocumentPair


class SentenceVectors:
    """A text -> vector table filled in large batches (embedding one text at a time is several times slower)."""

    def __init__(self, embedder: Embedder, *, max_texts: int | None = None) -> None:
        self.embedder = embedder
        self.max_texts = max_texts  # a worker keeps the most recent ones (1.5 kB each for MiniLM)
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()

    def add(self, texts: Sequence[str], *, batch: int = 512) -> None:
        missing = list(dict.fromkeys(text for text in texts if text not in self._vectors))
        for start in range(0, len(missing), batch):
            chunk = missing[start : start + batch]
            for text, vector in zip(chunk, self.embedder.embed(chunk), strict=True):
                self._vectors[text] = vector
        for text in texts:
            self._vectors.move_to_end(text)
        while self.max_texts is not None and len(self._vectors) > max(self.max_texts, len(texts)):
            self._vectors.popitem(last=False)

    def add_pairs(self, pairs: Sequence[ClaimDocumentPair]) -> None:
        self.add([text for pair in pairs for text in (pair.claim, *pair.document.sentences)])

    def ranked(self, claim: str, sentences: Sequence[str]) -> list[int]:
        if not sentences:
            return []
        return rank_sentences(claim, sentences, self.vector(claim), self.matrix(sentences))

    def matrix(self, texts: Sequence[str]) -> np.ndarray:
        self.add(texts)
        return np.stack([self._vectors[text] for text in texts]) if texts else np.zeros((0, 0), dtype=np.float32)

    def vector(self, text: str) -> np.ndarray:
        self.add([text])
        return self._vectors[text]
