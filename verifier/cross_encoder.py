"""A sequence-classification cross-encoder that labels a claim against a passage: SUPPORT, CONTRADICT or NO_EVIDENCE.

Any Hugging Face checkpoint loads by path or hub id. The label order comes from the checkpoint's own `id2label`
when its names are ours (or SciFact's), or from `labels` when the checkpoint uses generic names: the thesis's
DeBERTa-v3-large (`MilosKosRad/TextualEntailment_DeBERTa_preprocessedSciFACT`) says LABEL_0..2 and needs
`labels=("NO_EVIDENCE", "SUPPORT", "CONTRADICT")`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from transformers import (
    AutoTokenizer,
    BatchEncoding,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)

from verifier.base import Classification, ClassifierOptions
from verifier.checkpoint_overlay import load_sequence_classifier
from verifier.datasets import DatasetFormatError, normalise_label
from verifier.decision import DecisionRule
from verifier.precision import autocast, resolve_precision

# Tokens read per pair. Longer than the shipped MiniLM was trained on (192), on purpose: reading its own 192 instead
# lowers Citation-Integrity dev macro-F1 from 0.417 to 0.385 (same run, 2026-11-25), whose passages run long.
DEFAULT_MAX_LENGTH = 256


def checkpoint_labels(id2label: dict[int, str], override: Sequence[str] | None) -> tuple[str, ...]:
    """Our label names in the checkpoint's output order."""
    if override:
        labels = tuple(normalise_label(name) for name in override)
        if len(labels) != len(id2label):
            raise ValueError(f"{len(labels)} labels given for a checkpoint with {len(id2label)} outputs")
        return labels
    try:
        return tuple(normalise_label(id2label[index]) for index in range(len(id2label)))
    except DatasetFormatError as error:
        raise ValueError(
            f"the checkpoint's labels {list(id2label.values())} are not verdict names: set the label order"
        ) from error


class CrossEncoderVerifier:
    def __init__(
        self,
        tokenizer: PreTrainedTokenizerBase,
        model: PreTrainedModel,
        *,
        name: str,
        labels: Sequence[str] | None = None,
        max_length: int = DEFAULT_MAX_LENGTH,
        batch_size: int = 32,
        rule: DecisionRule | None = None,
        precision: str = "fp32",
    ) -> None:
        self.model_name = name
        self.tokenizer = tokenizer
        self.model = model
        self.labels = checkpoint_labels({int(k): str(v) for k, v in (model.config.id2label or {}).items()}, labels)
        self.max_length = max_length
        self.batch_size = batch_size
        self.precision = resolve_precision(precision)
        # A checkpoint without a stored rule (any hub model) keeps the plain argmax in its own label order.
        self.rule = rule if rule is not None and rule.labels == self.labels else DecisionRule(labels=self.labels)
        # One torch model serves the worker's threads; forward passes are serialised rather than interleaved.
        self._lock = threading.Lock()

    @classmethod
    def load(
        cls,
        model: str | Path,
        *,
        labels: Sequence[str] | None = None,
        max_length: int = DEFAULT_MAX_LENGTH,
        batch_size: int = 32,
        precision: str = "fp32",
    ) -> CrossEncoderVerifier:
        """A checkpoint by local path or hub id, with the decision rule stored beside it (`decision.json`) if any;
        weights stored in fp16 are run in fp32 (faster on CPU), or under bf16 autocast."""
        name = str(model)
        loaded = load_sequence_classifier(name, dtype=torch.float32)
        loaded.eval()
        return cls(
            AutoTokenizer.from_pretrained(name),
            loaded,
            name=name,
            labels=labels,
            max_length=max_length,
            batch_size=batch_size,
            rule=DecisionRule.load(name) if Path(name).is_dir() else None,
            precision=precision,
        )

    @classmethod
    def from_options(cls, options: ClassifierOptions) -> CrossEncoderVerifier:
        return cls.load(
            options.model, labels=options.labels or None, max_length=options.max_length, precision=options.precision
        )

    @property
    def model_id(self) -> str:
        return f"cross-encoder:{Path(self.model_name).name}"

    def _encode(self, batch: Sequence[tuple[str, str]]) -> BatchEncoding:
        encoded: BatchEncoding = self.tokenizer(
            [claim for claim, _ in batch],
            [passage for _, passage in batch],
            truncation="longest_first",
            max_length=self.max_length,
            padding=True,
            return_tensors="pt",
        )
        return encoded

    def pair_features(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """The first token's last hidden state plus the label probabilities per pair: EarlyFusion's input."""
        rows: list[np.ndarray] = []
        with self._lock, torch.inference_mode(), autocast(self.precision):
            for start in range(0, len(pairs), self.batch_size):
                batch = pairs[start : start + self.batch_size]
                encoded = self._encode(batch)
                output = self.model(**encoded, output_hidden_states=True)
                pooled = output.hidden_states[-1][:, 0]
                probabilities = torch.softmax(output.logits.float(), dim=-1)
                rows.append(torch.cat([pooled.float(), probabilities], dim=1).numpy())
        return np.concatenate(rows).astype(np.float32) if rows else np.zeros((0, 0), dtype=np.float32)

    def logits(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Raw logits per pair, in order (what the decision rule is fitted on). Batches are formed by length to
        pad little."""
        order = sorted(range(len(pairs)), key=lambda index: len(pairs[index][0]) + len(pairs[index][1]))
        result = np.zeros((len(pairs), len(self.labels)), dtype=np.float64)
        with self._lock, torch.inference_mode(), autocast(self.precision):
            for start in range(0, len(order), self.batch_size):
                batch = order[start : start + self.batch_size]
                encoded = self._encode([pairs[index] for index in batch])
                result[batch] = self.model(**encoded).logits.float().numpy()
        return result

    def classify(self, pairs: Sequence[tuple[str, str]]) -> list[Classification]:
        """Labels for (claim, passage) pairs, in order, through the checkpoint's decision rule."""
        return classifications(self.rule, self.logits(pairs))


def classifications(rule: DecisionRule, logits: np.ndarray) -> list[Classification]:
    return [
        Classification(
            label=decision.label,
            confidence=decision.confidence,
            probabilities=decision.probabilities,
            shown=decision.shown,
            raw_label=decision.raw_label,
            raw_probabilities=decision.raw_probabilities,
        )
        for decision in (rule.decide(logits) if len(logits) else [])
    ]
