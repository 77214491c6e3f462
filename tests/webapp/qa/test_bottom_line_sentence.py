"""The bottom line's sentence says what decided it, with singulars and plurals right."""

from __future__ import annotations

from typing import Any

import pytest

from webapp.qa.bottom_line_sentence import Decision, as_votes, decided_sentence


def _decision(**changes: Any) -> Decision:
    values: dict[str, Any] = {"title": "No", "side": "no", "leaning_yes": 1, "leaning_no": 0, "unclear": 9}
    return Decision(**{**values, **changes})


def test_the_model_reading_decides_when_it_outweighs_the_votes_on_its_side() -> None:
    decision = _decision(model_label="PMID 123", model_side="no", model_weight=4.0, side_vote_weight=0.0)
    assert decided_sentence(decision) == (
        "No: mainly the answer model's reading of PMID 123 (counted as 4 votes); 1 abstract leans yes; "
        "9 could not be read with confidence."
    )


def test_the_votes_decide_when_they_outweigh_the_model_reading() -> None:
    decision = _decision(
        leaning_no=2, unclear=1, model_label="PMID 123", model_side="no", model_weight=0.5, side_vote_weight=1.4
    )
    assert decided_sentence(decision) == (
        "No: mainly the votes of the 2 abstracts that lean no; 1 abstract leans yes; "
        "1 could not be read with confidence."
    )


def test_the_votes_decide_when_the_model_reading_is_on_the_other_side() -> None:
    decision = _decision(
        title="Yes", side="yes", leaning_yes=1, model_label="PMID 9", model_side="no", model_weight=4.0
    )
    assert decided_sentence(decision).startswith("Yes: mainly the vote of the 1 abstract that leans yes; 0 abstracts")


def test_without_a_model_reading_the_votes_decide() -> None:
    decision = _decision(title="Yes", side="yes", leaning_yes=3, leaning_no=1, unclear=0)
    assert decided_sentence(decision) == (
        "Yes: mainly the votes of the 3 abstracts that lean yes; 1 abstract leans no; 0 could not be read with "
        "confidence."
    )


@pytest.mark.parametrize(
    ("yes", "no", "words"),
    [
        (0, 0, "0 abstracts lean yes; 0 abstracts lean no"),
        (1, 1, "1 abstract leans yes; 1 abstract leans no"),
        (2, 2, "2 abstracts lean yes; 2 abstracts lean no"),
    ],
)
def test_counts_of_zero_one_and_two_read_right(yes: int, no: int, words: str) -> None:
    decision = _decision(title="Mixed evidence", side=None, leaning_yes=yes, leaning_no=no, unclear=0)
    assert decided_sentence(decision) == f"Mixed evidence: {words}; 0 could not be read with confidence."


def test_a_model_reading_on_a_mixed_bottom_line_is_named_not_called_decisive() -> None:
    decision = _decision(title="Mixed evidence", side=None, model_label="PMID 5", model_side="yes", model_weight=0.5)
    assert decided_sentence(decision) == (
        "Mixed evidence: the answer model's reading of PMID 5 (counted as 0.5 votes) leans yes; 1 abstract leans yes; "
        "0 abstracts lean no; 9 could not be read with confidence."
    )


def test_a_model_reading_alone_says_so() -> None:
    decision = _decision(
        leaning_yes=0, unclear=0, model_label="PMID 7", model_side="no", model_weight=4.0, model_alone=True
    )
    assert decided_sentence(decision) == (
        "No: the answer model's reading of PMID 7 (counted as 4 votes) alone; no abstract votes, as the verifier "
        "could not read this question as a claim to check."
    )


@pytest.mark.parametrize(
    ("weight", "words"), [(1.0, "1 vote"), (4.0, "4 votes"), (0.5, "0.5 votes"), (2.04, "2 votes")]
)
def test_a_weight_reads_as_votes(weight: float, words: str) -> None:
    assert as_votes(weight) == words
