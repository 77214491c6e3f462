"""Restatements of an abstract's sentence as an answer makes them: shorter, or several fused into one."""

from __future__ import annotations

import pytest

from verifier.sentence_edits import fuse, shorten


@pytest.mark.parametrize(
    ("sentence", "short"),
    [
        (
            "Our results suggest that metformin reduced the risk of colorectal cancer in diabetic patients.",
            "Metformin reduced the risk of colorectal cancer in diabetic patients.",
        ),
        (
            "In conclusion, vitamin D supplementation did not lower blood pressure in older adults.",
            "Vitamin D supplementation did not lower blood pressure in older adults.",
        ),
        (
            "Mortality was lower in the statin group (OR 0.61, 95% CI 0.45-0.83) than in the placebo group.",
            "Mortality was lower in the statin group than in the placebo group.",
        ),
        (
            "Exercise training improved peak oxygen uptake in heart failure patients, whereas quality of life "
            "did not change.",
            "Exercise training improved peak oxygen uptake in heart failure patients.",
        ),
    ],
)
def test_shortening_drops_the_lead_the_asides_and_the_tail(sentence: str, short: str) -> None:
    assert shorten(sentence) == short


def test_a_sentence_with_nothing_to_drop_is_not_shortened() -> None:
    assert shorten("Smoking increases the risk of bladder cancer in women.") is None


def test_a_tail_is_kept_when_too_little_would_be_left() -> None:
    assert shorten("Aspirin helped, whereas placebo did not help any of the patients.") is None


def test_two_sentences_fuse_into_one_with_the_second_lowered() -> None:
    fused = fuse(["The drug lowered HbA1c.", "The effect lasted 12 months."])
    assert fused == "The drug lowered HbA1c, and the effect lasted 12 months."


def test_three_sentences_fuse_and_a_leading_acronym_keeps_its_case() -> None:
    fused = fuse(["Mice gained weight.", "IL-6 rose.", "Patients improved."])
    assert fused == "Mice gained weight; IL-6 rose; and patients improved."


def test_fusing_one_sentence_is_an_error() -> None:
    with pytest.raises(ValueError, match="two or three"):
        fuse(["Alone."])
