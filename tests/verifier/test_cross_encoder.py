"""The committed verifier checkpoint, loaded for real, and the label-order rules for other checkpoints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings
from safetensors import safe_open

from verifier.cross_encoder import CrossEncoderVerifier, checkpoint_labels

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model

MODEL: Path = Path(settings.VERIMED.verification.verifier_model)


@pytest.fixture(scope="module")
def verifier() -> CrossEncoderVerifier:
    return CrossEncoderVerifier.load(MODEL)


def test_the_committed_weights_are_fp16_and_small_enough() -> None:
    weights = MODEL / "model.safetensors"
    # The default is mpnet (110M parameters): 219 MB in fp16, 438 MB in fp32.
    assert weights.stat().st_size < 250 * 1024 * 1024
    with safe_open(str(weights), framework="pt") as handle:
        first = next(iter(handle.keys()))
        assert str(handle.get_tensor(first).dtype) == "torch.float16"
    training = json.loads((MODEL / "training.json").read_text())
    assert training["best_epoch"] >= 1
    assert training["history"]


def test_it_labels_pairs_in_order_with_probabilities(verifier: CrossEncoderVerifier) -> None:
    assert verifier.labels == ("SUPPORT", "CONTRADICT", "NO_EVIDENCE")
    pairs = [
        ("Metformin lowers HbA1c.", "Metformin trial. Metformin lowered HbA1c by 1.2 points versus placebo."),
        ("Aspirin cures influenza.", "Knee surgery. Arthroscopy did not improve knee pain at two years."),
        ("Metformin lowers HbA1c.", "Metformin trial. " + "HbA1c was unchanged by metformin. " * 40),
    ]
    results = verifier.classify(pairs)
    assert len(results) == 3
    for result in results:
        assert sum(result.probabilities.values()) == pytest.approx(1.0, abs=1e-4)
        assert result.confidence == max(result.probabilities.values())
        assert result.label == max(result.probabilities, key=result.probabilities.__getitem__)
    # Order is kept although batches are formed by length.
    for again, first in zip(verifier.classify(pairs[::-1])[::-1], results, strict=True):
        assert again.probabilities == pytest.approx(first.probabilities, abs=1e-4)
    assert verifier.classify([]) == []


def test_label_order_comes_from_the_checkpoint_or_the_setting() -> None:
    assert checkpoint_labels({0: "SUPPORT", 1: "REFUTE", 2: "NEI"}, None) == ("SUPPORT", "CONTRADICT", "NO_EVIDENCE")
    generic = {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}
    # The thesis's DeBERTa-v3-large checkpoint: generic names, order given by the setting.
    assert checkpoint_labels(generic, ["NO_EVIDENCE", "SUPPORT", "CONTRADICT"]) == (
        "NO_EVIDENCE",
        "SUPPORT",
        "CONTRADICT",
    )
    with pytest.raises(ValueError, match="set the label order"):
        checkpoint_labels(generic, None)
    with pytest.raises(ValueError, match="2 labels given"):
        checkpoint_labels(generic, ["SUPPORT", "CONTRADICT"])
