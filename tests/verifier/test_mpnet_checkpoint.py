"""The committed mpnet verifier loads through the product's registry with its own decision rule and precision."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifier.base import ClassifierOptions
from verifier.registry import build_claim_classifier
from verifier.verdicts import CONTRADICT, NO_EVIDENCE, SUPPORT, UNCLEAR

pytestmark = pytest.mark.model

MPNET_VERIFIER = Path(__file__).resolve().parents[2] / "verifier" / "models" / "verimed-mpnet-verifier"

TRIAL = (
    "Metformin versus placebo in type 2 diabetes: a randomised trial. "
    "We randomised 400 adults with type 2 diabetes to metformin or placebo for 24 weeks. "
    "Metformin lowered HbA1c by 1.2 percentage points compared with placebo (p<0.001). "
    "Gastrointestinal adverse events were more common with metformin."
)
BATS = (
    "Bats as reservoirs of coronaviruses. We sampled 1,200 bats in southern China and sequenced coronavirus "
    "genomes from faecal swabs. Several lineages were closely related to SARS-CoV."
)

# Pairs the checkpoint gets right with a wide margin (its calibrated confidence about 0.69-0.75, the runner-up
# under 0.2), so a label swap, a broken rule or a wrong precision path shows here rather than a coin flip.
CLEAR_CUT = [
    ("Metformin lowered HbA1c by 1.2 percentage points compared with placebo.", TRIAL, SUPPORT),
    ("Metformin does not lower HbA1c in type 2 diabetes.", TRIAL, CONTRADICT),
    ("Metformin lowers HbA1c in type 2 diabetes.", BATS, NO_EVIDENCE),
]
# A comparison the trial never made: the model spreads its belief (calibrated confidence about 0.47), below the
# rule's Unclear threshold (0.62), so the page must show Unclear rather than a verdict.
UNSURE = ("Metformin lowers HbA1c more than sulfonylureas.", TRIAL)


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
    threshold = stored["unclear_threshold"]
    assert classifier.rule.unclear_threshold == pytest.approx(threshold)

    *verdicts, unsure = classifier.classify([(claim, passage) for claim, passage, _ in CLEAR_CUT] + [UNSURE])

    assert [(verdict.label, verdict.shown_label) for verdict in verdicts] == [
        (expected, expected) for _, _, expected in CLEAR_CUT
    ]
    for verdict in verdicts:
        assert (verdict.confidence or 0.0) >= threshold
        assert sum(verdict.probabilities.values()) == pytest.approx(1.0, abs=1e-3)
    assert unsure.confidence is not None
    assert unsure.confidence < threshold
    assert unsure.shown_label == UNCLEAR
    assert unsure.label in (SUPPORT, CONTRADICT, NO_EVIDENCE)  # the leaning, kept for the panel
