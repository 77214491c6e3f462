"""Tests for combining per-abstract labels into one verdict per answer sentence."""

from __future__ import annotations

import pytest

from verifier.verdicts import CONTRADICT, NO_EVIDENCE, NO_REFERENCE, SUPPORT, UNCITED, UNCLEAR, overall_verdict


def test_the_verdict_names_are_the_labels_the_page_shows() -> None:
    assert (SUPPORT, CONTRADICT, NO_EVIDENCE, NO_REFERENCE, UNCITED) == (
        "SUPPORT",
        "CONTRADICT",
        "NO_EVIDENCE",
        "NO_REFERENCE",
        "UNCITED",
    )


def test_no_labels_at_all_is_uncited() -> None:
    assert overall_verdict([]) == UNCITED


@pytest.mark.parametrize(
    "labels",
    [
        [CONTRADICT],
        [SUPPORT, CONTRADICT],
        [CONTRADICT, SUPPORT, SUPPORT],
        [NO_EVIDENCE, CONTRADICT],
        [NO_REFERENCE, CONTRADICT],
        [SUPPORT, NO_EVIDENCE, NO_REFERENCE, CONTRADICT],
    ],
)
def test_any_contradiction_wins(labels: list[str]) -> None:
    assert overall_verdict(labels) == CONTRADICT


@pytest.mark.parametrize(
    "labels",
    [
        [SUPPORT],
        [SUPPORT, SUPPORT],
        [NO_EVIDENCE, SUPPORT],
        [SUPPORT, NO_REFERENCE],
        [NO_REFERENCE, NO_EVIDENCE, SUPPORT],
    ],
)
def test_without_a_contradiction_any_support_wins(labels: list[str]) -> None:
    assert overall_verdict(labels) == SUPPORT


@pytest.mark.parametrize("labels", [[NO_REFERENCE], [NO_REFERENCE, NO_REFERENCE]])
def test_only_unretrieved_references_is_no_reference(labels: list[str]) -> None:
    assert overall_verdict(labels) == NO_REFERENCE


@pytest.mark.parametrize(
    "labels",
    [
        [NO_EVIDENCE],
        [NO_EVIDENCE, NO_EVIDENCE],
        [NO_REFERENCE, NO_EVIDENCE],
        [NO_EVIDENCE, NO_REFERENCE, NO_REFERENCE],
    ],
)
def test_a_reference_without_evidence_outweighs_an_unretrieved_one(labels: list[str]) -> None:
    assert overall_verdict(labels) == NO_EVIDENCE


def test_the_order_of_labels_does_not_matter() -> None:
    labels = [NO_REFERENCE, SUPPORT, NO_EVIDENCE]

    assert overall_verdict(labels) == overall_verdict(reversed(labels)) == SUPPORT


def test_it_accepts_any_iterable_including_a_generator() -> None:
    assert overall_verdict(label for label in (NO_EVIDENCE, CONTRADICT)) == CONTRADICT
    assert overall_verdict(label for label in ()) == UNCITED


@pytest.mark.parametrize(
    ("labels", "verdict"),
    [
        ([UNCLEAR, SUPPORT], SUPPORT),
        ([UNCLEAR, NO_EVIDENCE], NO_EVIDENCE),
        ([SUPPORT, UNCLEAR, UNCLEAR], SUPPORT),
        ([UNCLEAR, NO_REFERENCE], NO_REFERENCE),
    ],
)
def test_an_unclear_citation_carries_no_weight(labels: list[str], verdict: str) -> None:
    assert overall_verdict(labels) == verdict


def test_an_unclear_contradiction_cannot_paint_a_supported_sentence_red() -> None:
    # The decision rule shows an unsure CONTRADICT as UNCLEAR, so the confident SUPPORT decides.
    assert overall_verdict([SUPPORT, UNCLEAR]) == SUPPORT


@pytest.mark.parametrize("labels", [[UNCLEAR], [UNCLEAR, UNCLEAR]])
def test_a_sentence_is_unclear_only_when_every_citation_is(labels: list[str]) -> None:
    assert overall_verdict(labels) == UNCLEAR
