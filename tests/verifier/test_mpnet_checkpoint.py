"""The committed mpnet verifier loads through the product's registry with its own decision rule and precision."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifier.base import ClassifierOptions
from verifier.registry import build_claim_classifier

pytestmark = pytest.mark.model

MPNET_VERIFIER = Path(__file__).resolve().parents[2] / "verifier" / "models" / "verimed-mpnet-verifier"


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_the_mpnet_checkpoint_classifies_with_its_rule_at_the_chosen_precision(precision: str) -> None:
    from verifier.cross_encoder import CrossEncoderVerifier

    classifier = build_claim_classifier(
        ClassifierOptions(kind="cross-encoder", model=str(MPNET_VERIFIER), precision=precision)
    )

    assert isinstance(classifier, CrossEncoderVerifier)
    assert classifier.precision == precision
    assert classifier.model.config.model_type == "mpnet"
    stored = json.loads((MPNET_VERIFIER / "decision.json").read_text())
    assert classifier.rule.temperature == pytest.approx(stored["temperature"])
    [verdict] = classifier.classify(
        [("Metformin lowers HbA1c.", "Metformin trial. Metformin lowered HbA1c by 1.2 points against placebo.")]
    )
    assert verdict.label in ("SUPPORT", "CONTRADICT", "NO_EVIDENCE")
    assert sum(verdict.probabilities.values()) == pytest.approx(1.0, abs=1e-3)
