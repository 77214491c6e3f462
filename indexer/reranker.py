"""The reranker: a cross-encoder that scores (question, passage) pairs, trained here (`indexer.reranker_training`)
and committed under `indexer/models/`. An abstract scores as its best passage window (`indexer.passages`).

Two backends run the same weights: `torch` and `onnx-int8` (dynamic int8 weights through ONNX Runtime, exported once
into a cache folder; faster on CPU). Loads lazily, on `warm_up()` or the first call.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np

RerankerBackend = Literal["torch", "onnx-int8"]
RERANKER_BACKENDS: tuple[RerankerBackend, ...] = get_args(RerankerBackend)
DEFAULT_RERANKER = Path(__file__).parent / "models" / "verimed-minilm-reranker"
# The scoring head's name in the checkpoint's config: the reranker refuses a checkpoint without it (a verifier or an
# embedder folder loaded by mistake would score nonsense).
RERANKER_LABEL = "RELEVANCE"


class RerankerLoadError(ValueError):
    """The folder holds no reranker: missing, or a checkpoint trained for something else."""


def check_reranker_folder(path: Path) -> None:
    import json

    config_path = path / "config.json"
    if not config_path.exists():
        raise RerankerLoadError(f"no reranker checkpoint at {path} (config.json is missing)")
    labels = json.loads(config_path.read_text()).get("id2label", {})
    if list(labels.values()) != [RERANKER_LABEL]:
        raise RerankerLoadError(f"{path} is not a reranker checkpoint: its outputs are {list(labels.values())}")


class CrossEncoderReranker:
    def __init__(
        self,
        path: Path = DEFAULT_RERANKER,
        *,
        backend: RerankerBackend = "torch",
        cache_dir: Path | None = None,
        threads: int | None = None,
        batch_size: int = 32,
        max_length: int = 128,
    ) -> None:
        if backend not in RERANKER_BACKENDS:
            raise ValueError(f"unknown reranker backend {backend!r}; choose one of {', '.join(RERANKER_BACKENDS)}")
        if backend != "torch" and cache_dir is None:
            raise ValueError(f"the {backend} backend needs cache_dir, the folder its one-time ONNX export is kept in")
        self.path = Path(path)
        self.backend = backend
        self.cache_dir = cache_dir
        self.threads = threads
        self.batch_size = batch_size
        self.max_length = max_length
        self._scorer: Any = None
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        self._load()

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        """One relevance score per passage (higher is more relevant; comparable within one query)."""
        if not passages:
            return np.zeros(0, dtype=np.float32)
        scorer = self._load()
        # Sorted by length so each batch pads to similar lengths; scores go back to the callers' order.
        order = sorted(range(len(passages)), key=lambda index: len(passages[index]))
        scores = np.zeros(len(passages), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            scores[batch] = scorer([query] * len(batch), [passages[index] for index in batch])
        return scores

    def _load(self) -> Any:
        with self._lock:
            if self._scorer is None:
                check_reranker_folder(self.path)
                if self.backend == "torch":
                    self._scorer = _TorchScorer(self.path, threads=self.threads, max_length=self.max_length)
                else:
                    from indexer.reranker_onnx import OnnxScorer, exported_reranker_dir

                    assert self.cache_dir is not None  # checked in __init__
                    folder = exported_reranker_dir(self.path, self.cache_dir)
                    self._scorer = OnnxScorer(folder, threads=self.threads, max_length=self.max_length)
            return self._scorer


class _TorchScorer:
    def __init__(self, path: Path, *, threads: int | None, max_length: int) -> None:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        if threads:
            torch.set_num_threads(threads)
        self._torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(str(path))
        self.model = AutoModelForSequenceClassification.from_pretrained(str(path), dtype=torch.float32).eval()
        self.max_length = max_length

    def __call__(self, queries: list[str], passages: list[str]) -> np.ndarray:
        encoded = self.tokenizer(
            queries, passages, truncation="only_second", max_length=self.max_length, padding=True, return_tensors="pt"
        )
        with self._torch.inference_mode():
            logits = self.model(**encoded).logits
        return np.asarray(logits[:, 0].float().numpy(), dtype=np.float32)
