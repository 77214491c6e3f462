"""The committed verifier checkpoint, loaded for real, and the label-order rules for other checkpoints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings
from safetensors import safe_open

from verifier.checkpoint_overlay import OVERLAY_WEIGHTS, Overlay
from verifier.cross_encoder import CrossEncoderVerifier, checkpoint_labels

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model

MODEL: Path = Path(settings.VERIMED.verification.verifier_model)


@pytest.fixture(scope="module")
def verifier() -> CrossEncoderVerifier:
    return CrossEncoderVerifier.load(MODEL)


def test_the_committed_weights_are_fp16_and_small_enough() -> None:
    # The default is an overlay (verifier.checkpoint_overlay): mpnet's top 6 layers and head (86 MB in fp16) read on
    # the earlier mpnet checkpoint (110M parameters: 219 MB in fp16, 438 MB in fp32).
    overlay = Overlay.read(MODEL)
    assert overlay is not None
    for weights, limit_mb in ((MODEL / OVERLAY_WEIGHTS, 100), (overlay.base / "model.safetensors", 250)):
        assert weights.stat().st_size < limit_mb * 1024 * 1024, weights
        with safe_open(str(weights), framework="pt") as handle:
            first = next(iter(handle.keys()))
            assert str(handle.get_tensor(first).dtype) == "torch.float16"
    overlay.check_base()
    training = json.loads((MODEL / "training.json").read_text())
    assert training["best_epoch"] >= 1
    assert training["history"]
    assert training["config"]["trainable_layers"] == 6


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


OWN_ABSTRACT = (
    "Metformin and glycaemic control in type 2 diabetes. In this randomised trial of 412 adults, metformin lowered "
    "HbA1c by 1.1 percentage points more than placebo at 24 weeks. Gastrointestinal adverse events were more common "
    "with metformin."
)
OTHER_ABSTRACT = (
    "Statins and muscle symptoms. In a crossover trial of 200 patients reporting muscle pain on statins, symptoms were "
    "similar during statin and placebo periods. Most symptoms were attributed to the nocebo effect."
)


def test_the_default_shows_the_verdicts_of_answer_shaped_pairs(verifier: CrossEncoderVerifier) -> None:
    """What the product-shaped training was for: an answer sentence restating the abstract it cites is shown as
    SUPPORT, the same sentence cited against another abstract as NO_EVIDENCE, and a flipped direction as
    CONTRADICT, none of them Unclear (the earlier mpnet showed the NO_EVIDENCE pair as Unclear)."""
    restated = "Metformin lowered HbA1c by 1.1 percentage points more than placebo at 24 weeks."
    pairs = [
        (restated, OWN_ABSTRACT),
        ("Metformin lowered HbA1c more than placebo.", OWN_ABSTRACT),
        (restated, OTHER_ABSTRACT),
        ("Metformin raised HbA1c compared with placebo at 24 weeks.", OWN_ABSTRACT),
        ("Muscle symptoms were similar during statin and placebo periods.", OTHER_ABSTRACT),
    ]
    shown = [result.shown_label for result in verifier.classify(pairs)]
    assert shown == ["SUPPORT", "SUPPORT", "NO_EVIDENCE", "CONTRADICT", "SUPPORT"]
