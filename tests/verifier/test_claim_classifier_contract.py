"""The PairClassifier contract, run against every adapter verifier.registry builds: the committed cross-encoder
checkpoint, the LLM judge over the real llama.cpp server, and the fake. Same assertions, different fixture."""

from __future__ import annotations

import pytest
from django.conf import settings

from generator.base import LLMSettings
from indexer.adapter_registry import UnknownAdapterError
from tests.support import TEST_LLM_MODEL
from verifier.base import Classification, ClassifierOptions, PairClassifier
from verifier.registry import build_claim_classifier
from verifier.verdicts import CONTRADICT, NO_EVIDENCE, SUPPORT, UNCLEAR

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model

LABELS = {SUPPORT, CONTRADICT, NO_EVIDENCE}
OBVIOUS_SUPPORT = (
    "Aspirin reduced mortality in the trial.",
    "Aspirin trial. In the trial, aspirin reduced all-cause mortality by 20% compared with placebo.",
)
UNRELATED = ("Aspirin cures influenza.", "Knee surgery. Arthroscopy did not improve knee pain at two years.")
PAIRS = [
    OBVIOUS_SUPPORT,
    UNRELATED,
    ("Metformin causes lactic acidosis.", "Metformin safety. No case of lactic acidosis occurred in two years."),
]


@pytest.fixture(
    scope="module",
    params=[
        pytest.param("cross-encoder", marks=pytest.mark.model),
        pytest.param("llm-judge", marks=pytest.mark.model),
        "fake",
    ],
)
def classifier(request: pytest.FixtureRequest) -> PairClassifier:
    if request.param == "llm-judge":
        llm = LLMSettings(base_url=request.getfixturevalue("llm_base_url"), model=TEST_LLM_MODEL)
        return build_claim_classifier(ClassifierOptions(kind="llm-judge", llm=llm))
    return build_claim_classifier(
        ClassifierOptions(kind=request.param, model=settings.VERIMED.verification.verifier_model)
    )


@pytest.fixture(scope="module")
def classified(classifier: PairClassifier) -> list[Classification]:
    """PAIRS classified once per adapter (the LLM judge makes a call per pair)."""
    return classifier.classify(PAIRS)


def test_it_names_its_model(classifier: PairClassifier) -> None:
    assert isinstance(classifier.model_id, str)
    assert classifier.model_id


def test_it_labels_every_pair_in_order(classifier: PairClassifier, classified: list[Classification]) -> None:
    assert len(classified) == len(PAIRS)
    assert all(result.label in LABELS for result in classified)
    assert all(result.shown_label in {*LABELS, UNCLEAR} for result in classified)
    reversed_labels = [result.label for result in classifier.classify(PAIRS[::-1])]
    assert reversed_labels[::-1] == [result.label for result in classified]


def test_it_classifies_no_pairs_as_nothing(classifier: PairClassifier) -> None:
    assert classifier.classify([]) == []


def test_it_is_deterministic(classifier: PairClassifier, classified: list[Classification]) -> None:
    assert classifier.classify(PAIRS) == classified


def test_an_obvious_pair_is_supported_and_an_unrelated_one_is_not(classified: list[Classification]) -> None:
    supported, unrelated = classified[PAIRS.index(OBVIOUS_SUPPORT)], classified[PAIRS.index(UNRELATED)]

    assert supported.label == SUPPORT
    assert unrelated.label != SUPPORT


def test_its_probabilities_when_it_gives_them_are_a_distribution_that_carries_the_label(
    classified: list[Classification],
) -> None:
    for result in classified:
        if result.confidence is None:  # a generative judge: its own words instead
            assert result.probabilities == {}
            assert result.raw
            continue
        assert set(result.probabilities) == LABELS
        assert sum(result.probabilities.values()) == pytest.approx(1.0, abs=1e-3)
        assert result.probabilities[result.label] == pytest.approx(result.confidence)
        assert 0 < result.confidence <= 1


# The registry


def test_an_unknown_classifier_is_refused_with_the_known_ones() -> None:
    with pytest.raises(UnknownAdapterError, match=r"'nli' \(available: cross-encoder, llm-judge, fake\)"):
        build_claim_classifier(ClassifierOptions(kind="nli"))


def test_the_llm_judge_is_built_on_the_configured_model_without_calling_it() -> None:
    llm = LLMSettings(base_url="http://127.0.0.1:9/v1", model="some-model")

    assert build_claim_classifier(ClassifierOptions(kind="llm-judge", llm=llm)).model_id == "llm-judge:some-model"


def test_the_llm_judge_needs_llm_settings() -> None:
    with pytest.raises(ValueError, match="needs LLM settings"):
        build_claim_classifier(ClassifierOptions(kind="llm-judge"))
