"""The BiLSTM evidence tagger: it learns, picks its threshold on dev, and survives a save and load."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from verifier.evidence_model import (
    EvidenceTagger,
    TaggingExample,
    best_threshold,
    late_fusion_features,
    sentence_f1,
    train_tagger,
)

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model


def synthetic(count: int, seed: int) -> list[TaggingExample]:
    """Documents of 3-9 sentences; a sentence is evidence when its vector points along the claim's."""
    rng = np.random.default_rng(seed)
    examples = []
    for _ in range(count):
        size = int(rng.integers(3, 10))
        claim = rng.normal(size=8).astype(np.float32)
        labels = tuple(int(value) for value in rng.random(size) < 0.25)
        sentences = rng.normal(size=(size, 8)).astype(np.float32)
        for index, label in enumerate(labels):
            if label:
                sentences[index] = claim + 0.3 * rng.normal(size=8)
        examples.append(TaggingExample(late_fusion_features(claim, sentences), labels))
    return examples


def test_late_fusion_features_combine_claim_and_sentence() -> None:
    claim = np.array([1.0, 2.0], dtype=np.float32)
    sentences = np.array([[3.0, 0.0], [1.0, 2.0]], dtype=np.float32)
    features = late_fusion_features(claim, sentences)
    assert features.shape == (2, 8)
    assert features[0].tolist() == [3.0, 0.0, 1.0, 2.0, 3.0, 0.0, 2.0, 2.0]


def test_the_tagger_learns_and_round_trips(tmp_path: Path) -> None:
    tagger, history = train_tagger(synthetic(300, 1), synthetic(60, 2), kind="late_fusion", epochs=6)
    test = synthetic(60, 3)
    predicted = [[int(p >= tagger.threshold) for p in tagger.probabilities(e.features)] for e in test]
    assert sentence_f1(predicted, [list(e.labels) for e in test])[2] > 0.85
    assert len(history) == 6
    assert 0.05 <= tagger.threshold <= 0.95

    tagger.save(tmp_path / "tagger", note="test")
    loaded = EvidenceTagger.load(tmp_path / "tagger")
    assert loaded.threshold == tagger.threshold
    assert loaded.kind == "late_fusion"
    assert loaded.probabilities(test[0].features) == pytest.approx(tagger.probabilities(test[0].features), abs=2e-3)
    assert loaded.probabilities(np.zeros((0, 32), dtype=np.float32)) == []


def test_sentence_f1_and_threshold_choice() -> None:
    assert sentence_f1([[1, 0, 1]], [[1, 1, 0]]) == pytest.approx((0.5, 0.5, 0.5))
    assert sentence_f1([[0, 0]], [[0, 0]]) == (0.0, 0.0, 0.0)
    threshold, f1 = best_threshold([[0.9, 0.3, 0.1], [0.35, 0.2]], [[1, 1, 0], [1, 0]])
    assert f1 == 1.0
    assert 0.2 < threshold <= 0.3
