"""A deterministic fake embedder, for fast tests only: registered as "fake", never the default of any profile.

A text becomes a hashed bag of its words (each word other than a stopword adds +1 or -1 to one of 384 dimensions),
L2-normalised: texts that share words are close, texts that share none are orthogonal but for hash collisions. No
model loads and nothing heavy is imported, so a test that only needs vectors of the right shape runs in milliseconds.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from indexer.base import EmbedderOptions, Vectors
from indexer.stopwords import query_terms

DIMENSION = 384  # all-MiniLM-L6-v2's, so that the fake fits wherever the default model does
MAX_TOKENS = 256
_SPECIAL_TOKENS = 2  # what a BERT tokenizer adds around a text ([CLS] and [SEP])
_TOKEN = re.compile(r"[^\W_]+|[^\w\s]")


class FakeEmbedder:
    model_id = "fake-embedder"

    def __init__(self, *, dimension: int = DIMENSION) -> None:
        self.dimension = dimension

    @classmethod
    def from_options(cls, options: EmbedderOptions) -> FakeEmbedder:
        return cls()

    @property
    def max_tokens(self) -> int:
        return MAX_TOKENS

    def warm_up(self) -> None:
        """Nothing to load."""

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        """Words and punctuation marks, plus the two special tokens a BERT tokenizer adds."""
        return [len(_TOKEN.findall(text)) + _SPECIAL_TOKENS for text in texts]

    def embed(self, texts: Sequence[str]) -> Vectors:
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for term in query_terms(text):
                digest = hashlib.blake2b(term.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self.dimension
                vectors[row, bucket] += 1.0 if digest[4] & 1 else -1.0
            norm = float(np.linalg.norm(vectors[row]))
            if norm == 0.0:
                # No word survived (or the words cancelled out): one fixed direction keeps the vector unit length.
                vectors[row, 0], norm = 1.0, 1.0
            vectors[row] /= norm
        return vectors
