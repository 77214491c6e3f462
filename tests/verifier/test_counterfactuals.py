"""Counterfactual CONTRADICT claims: each edit changes what the claim says, in one place."""

from __future__ import annotations

import random

import pytest

from verifier.counterfactuals import change_number, counterfactual, drug_like_terms, flip_direction, negate, swap_term
from verifier.datasets import ClaimDocumentPair, Document
from verifier.extra_training import counterfactual_pairs


@pytest.mark.parametrize(
    ("claim", "edited"),
    [
        ("Klf2 is important for myeloid cell function.", "Klf2 is not important for myeloid cell function."),
        ("Dexamethasone is not effective to treat covid-19.", "Dexamethasone is effective to treat covid-19."),
        ("Aspirin does not prevent stroke.", "Aspirin does prevent stroke."),
        ("There is no difference in survival.", "There is a difference in survival."),
        ("Statins showed no effect on mortality.", "Statins showed an effect on mortality."),
    ],
)
def test_negation_is_added_or_removed(claim: str, edited: str) -> None:
    assert negate(claim) == edited


def test_a_claim_negated_another_way_is_not_negated_twice() -> None:
    assert negate("Drug X never helps.") is None


@pytest.mark.parametrize(
    ("claim", "edited"),
    [
        ("Metformin increased insulin sensitivity.", "Metformin decreased insulin sensitivity."),
        ("Mortality was lower in the treated arm.", "Mortality was higher in the treated arm."),
        ("Higher doses worked.", "Lower doses worked."),
        ("Tirabrutinib is effective for lymphoma.", "Tirabrutinib is ineffective for lymphoma."),
        ("Migraine with aura is associated with stroke.", "Migraine with aura is not associated with stroke."),
    ],
)
def test_a_direction_word_is_flipped(claim: str, edited: str) -> None:
    assert flip_direction(claim) == edited


def test_a_result_number_changes_but_names_and_years_do_not() -> None:
    rng = random.Random(1)
    for _ in range(20):
        edited = change_number("COVID-19 raised mortality by 20% in 2020.", rng)
        assert edited is not None
        assert edited.startswith("COVID-19 raised mortality by ")
        assert edited.endswith("% in 2020.")
        assert "by 20%" not in edited
    assert change_number("COVID-19 spread in 2020.", rng) is None


def test_a_drug_like_name_is_swapped_for_another() -> None:
    vocabulary = drug_like_terms(["Rituximab helps.", "Imatinib binds BCR-ABL.", "BRCA1 rises."])
    assert {"Rituximab", "Imatinib", "BRCA1"} <= set(vocabulary)
    edited = swap_term("Rituximab improves survival.", vocabulary, random.Random(2))
    assert edited is not None
    assert not edited.startswith("Rituximab")
    assert edited.endswith(" improves survival.")


def test_every_counterfactual_differs_from_its_claim_and_says_how() -> None:
    rng = random.Random(3)
    claims = ["Drug A reduced pain by 30%.", "Vitamin D is associated with fewer falls.", "Exercise helps sleep."]
    for claim in claims:
        made = counterfactual(claim, rng)
        assert made is not None
        assert made.claim != claim
        assert made.kind in {"negation", "direction", "number", "swap"}


def test_counterfactual_pairs_keep_the_document_and_rationale_and_contradict() -> None:
    document = Document("d", "T", ("Pain fell by 30% with drug A.", "Other."))
    pairs = [ClaimDocumentPair(str(i), "Drug A reduced pain by 30%.", document, "SUPPORT", (0,)) for i in range(10)]
    pairs.append(ClaimDocumentPair("x", "Drug A is useless.", document, "CONTRADICT", (0,)))

    made = counterfactual_pairs(pairs, fraction=1.0)

    assert len(made) == 10  # only SUPPORT pairs give counterfactuals
    assert all(pair.label == "CONTRADICT" and pair.document is document and pair.rationale == (0,) for pair in made)
    assert all(pair.claim != "Drug A reduced pain by 30%." for pair in made)
    assert counterfactual_pairs(pairs, fraction=0.0) == []
