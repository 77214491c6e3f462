"""Sentence-level evidence extraction after "Fast Evidence Extraction for Grounded Language Model Outputs".

Every sentence of a cited abstract gets a probability of being evidence for the claim; the sentences at or above
a threshold chosen on dev are the evidence the page highlights.

- LateFusion: claim and sentences are embedded separately (sentence vectors cached per abstract), combined per
  sentence as [s, c, s*c, |s-c|], and a BiLSTM over the document's sentences gives each a sigmoid. Cheap: only
  the claim is embedded at question time.
- EarlyFusion: a cross-encoder reads each (claim, sentence) pair; its pooled vector per sentence goes through the
  same BiLSTM head. Here the cross-encoder is the trained claim verifier, frozen (fine-tuning it jointly is out of
  reach of a 2-core CPU), so the head learns which of its pair readings mark evidence.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

FeatureMatrix = np.ndarray  # (sentences, features) for one (claim, document) pair


def late_fusion_features(claim_vector: np.ndarray, sentence_vectors: np.ndarray) -> FeatureMatrix:
    claim = np.broadcast_to(claim_vector, sentence_vectors.shape)
    return np.concatenate(
        [sentence_vectors, claim, sentence_vectors * claim, np.abs(sentence_vectors - claim)], axis=1
    ).astype(np.float32)


class SentenceTagger(nn.Module):
    """Per-sentence features -> projection -> BiLSTM across the document -> one logit per sentence."""

    def __init__(self, input_size: int, hidden: int = 128, dropout: float = 0.2) -> None:
        super().__init__()
        self.project = nn.Sequential(nn.Linear(input_size, hidden), nn.GELU(), nn.Dropout(dropout))
        self.lstm = nn.LSTM(hidden, hidden, batch_first=True, bidirectional=True)
        self.out = nn.Sequential(nn.Dropout(dropout), nn.Linear(2 * hidden, 1))

    def forward(self, features: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        projected = self.project(features)
        packed = nn.utils.rnn.pack_padded_sequence(projected, lengths, batch_first=True, enforce_sorted=False)
        encoded, _ = self.lstm(packed)
        unpacked, _ = nn.utils.rnn.pad_packed_sequence(encoded, batch_first=True, total_length=features.shape[1])
        logits: torch.Tensor = self.out(unpacked).squeeze(-1)
        return logits


@dataclass(frozen=True)
class TaggingExample:
    features: FeatureMatrix
    labels: tuple[int, ...]  # 1 for a rationale sentence


def _batch(examples: Sequence[TaggingExample]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    longest = max(len(example.labels) for example in examples)
    width = examples[0].features.shape[1]
    features = torch.zeros(len(examples), longest, width)
    labels = torch.zeros(len(examples), longest)
    mask = torch.zeros(len(examples), longest, dtype=torch.bool)
    for row, example in enumerate(examples):
        size = len(example.labels)
        features[row, :size] = torch.from_numpy(example.features)
        labels[row, :size] = torch.tensor(example.labels, dtype=torch.float32)
        mask[row, :size] = True
    lengths = torch.tensor([len(example.labels) for example in examples])
    return features, labels, mask, lengths


class EvidenceTagger:
    """A trained SentenceTagger with its decision threshold and feature kind, saved as one folder."""

    def __init__(self, model: SentenceTagger, *, kind: str, threshold: float, input_size: int) -> None:
        self.model = model.eval()
        self.kind = kind
        self.threshold = threshold
        self.input_size = input_size

    def probabilities(self, features: FeatureMatrix) -> list[float]:
        if len(features) == 0:
            return []
        with torch.inference_mode():
            tensor = torch.from_numpy(np.asarray(features, dtype=np.float32)).unsqueeze(0)
            logits = self.model(tensor, torch.tensor([len(features)]))
        return [float(value) for value in torch.sigmoid(logits[0])]

    def save(self, folder: Path, **metadata: object) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        torch.save({name: t.half() for name, t in self.model.state_dict().items()}, folder / "tagger.pt")
        config = {"kind": self.kind, "threshold": self.threshold, "input_size": self.input_size, **metadata}
        (folder / "config.json").write_text(json.dumps(config, indent=2))

    @classmethod
    def load(cls, folder: Path) -> EvidenceTagger:
        config = json.loads((folder / "config.json").read_text())
        input_size = int(config["input_size"])
        model = SentenceTagger(input_size)
        state = torch.load(folder / "tagger.pt", map_location="cpu", weights_only=True)
        model.load_state_dict({name: tensor.float() for name, tensor in state.items()})
        return cls(model, kind=str(config["kind"]), threshold=float(config["threshold"]), input_size=input_size)


def train_tagger(
    train: Sequence[TaggingExample],
    dev: Sequence[TaggingExample],
    *,
    kind: str,
    epochs: int = 12,
    batch_size: int = 16,
    learning_rate: float = 1e-3,
    seed: int = 13,
) -> tuple[EvidenceTagger, list[dict[str, float]]]:
    """Train, keep the epoch with the best dev F1 at its best threshold; the threshold is part of the model."""
    torch.manual_seed(seed)
    rng = random.Random(seed)
    input_size = train[0].features.shape[1]
    model = SentenceTagger(input_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.01)
    positives = sum(sum(example.labels) for example in train)
    total = sum(len(example.labels) for example in train)
    loss_function = nn.BCEWithLogitsLoss(pos_weight=torch.tensor((total - positives) / max(positives, 1)) ** 0.5)
    order = list(range(len(train)))
    best: tuple[float, float, dict[str, torch.Tensor]] | None = None
    history: list[dict[str, float]] = []
    for epoch in range(1, epochs + 1):
        model.train()
        rng.shuffle(order)
        for start in range(0, len(order), batch_size):
            features, labels, mask, lengths = _batch([train[index] for index in order[start : start + batch_size]])
            loss = loss_function(model(features, lengths)[mask], labels[mask])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        tagger = EvidenceTagger(model, kind=kind, threshold=0.5, input_size=input_size)
        scores = [tagger.probabilities(example.features) for example in dev]
        threshold, f1 = best_threshold(scores, [example.labels for example in dev])
        history.append({"epoch": epoch, "dev_f1": round(f1, 4), "threshold": threshold})
        if best is None or f1 > best[0]:
            best = (f1, threshold, {name: t.detach().clone() for name, t in model.state_dict().items()})
    assert best is not None
    model.load_state_dict(best[2])
    return EvidenceTagger(model, kind=kind, threshold=best[1], input_size=input_size), history


def sentence_f1(predicted: Sequence[Sequence[int]], gold: Sequence[Sequence[int]]) -> tuple[float, float, float]:
    """Micro precision, recall and F1 over all sentences of all pairs (1 = evidence)."""
    true_positive = sum(p and g for ps, gs in zip(predicted, gold, strict=True) for p, g in zip(ps, gs, strict=True))
    predicted_positive = sum(sum(ps) for ps in predicted)
    gold_positive = sum(sum(gs) for gs in gold)
    precision = true_positive / predicted_positive if predicted_positive else 0.0
    recall = true_positive / gold_positive if gold_positive else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def best_threshold(scores: Sequence[Sequence[float]], gold: Sequence[Sequence[int]]) -> tuple[float, float]:
    best = (0.5, -1.0)
    for threshold in np.arange(0.05, 0.96, 0.05):
        predicted = [[int(score >= threshold) for score in row] for row in scores]
        f1 = sentence_f1(predicted, gold)[2]
        if f1 > best[1]:
            best = (round(float(threshold), 2), f1)
    return best
