"""Tests for sentence splitting with exact character offsets on biomedical text."""

from __future__ import annotations

from itertools import pairwise

import pytest

from indexer.sentences import Span, split_sentences


def texts(text: str) -> list[str]:
    return [span.text for span in split_sentences(text)]


def assert_offsets_exact(text: str, spans: list[Span]) -> None:
    for span in spans:
        assert text[span.start : span.end] == span.text
    starts = [span.start for span in spans]
    assert starts == sorted(starts)
    assert all(earlier.end <= later.start for earlier, later in pairwise(spans))


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        (
            "Smith et al. reported a benefit. The effect was large.",
            ["Smith et al. reported a benefit.", "The effect was large."],
        ),
        (
            "Drug A vs. drug B showed no difference. Both were safe.",
            ["Drug A vs. drug B showed no difference.", "Both were safe."],
        ),
        (
            "Some drugs, e.g. metformin, lower glucose. Others do not.",
            ["Some drugs, e.g. metformin, lower glucose.", "Others do not."],
        ),
        (
            "Patients received 1.5 mg daily. Outcomes improved.",
            ["Patients received 1.5 mg daily.", "Outcomes improved."],
        ),
        (
            "As shown in Fig. 2 the curve rises. It then falls.",
            ["As shown in Fig. 2 the curve rises.", "It then falls."],
        ),
        (
            "The response rate was 45.3% (95% CI 30.1-60.2%; p < 0.05). See Table 1.",
            ["The response rate was 45.3% (95% CI 30.1-60.2%; p < 0.05).", "See Table 1."],
        ),
    ],
)
def test_it_does_not_split_on_biomedical_abbreviations_or_decimals(text: str, sentences: list[str]) -> None:
    spans = split_sentences(text)

    assert [span.text for span in spans] == sentences
    assert_offsets_exact(text, spans)


@pytest.mark.parametrize(
    "text",
    [
        "  Leading spaces. Two   spaces   inside.  Trailing.   ",
        "First line.\n\nSecond paragraph after a blank line.\nThird line.",
        "Tabs\tand text. Another one!  Really? Yes.",
        "Repeated. Repeated. Repeated.",
        "It works (PUBMED:1).   It is safe [PMID 2, 3]. (PUBMED:4)",
        "\N{GREEK SMALL LETTER ALPHA}-synuclein aggregates. \N{GREEK SMALL LETTER BETA}-amyloid too \N{EM DASH} oddly.",
        "Dose was 2.5 mg/kg vs. 5 mg/kg, i.e. half. Smith et al. agreed.",
    ],
)
def test_text_between_offsets_is_exactly_the_sentence(text: str) -> None:
    spans = split_sentences(text)

    assert spans
    assert_offsets_exact(text, spans)


def test_sentences_are_stripped_and_offsets_skip_the_surrounding_whitespace() -> None:
    text = "  First sentence.   Second sentence.  "

    spans = split_sentences(text)

    assert spans == [Span("First sentence.", 2, 17), Span("Second sentence.", 20, 36)]


def test_identical_sentences_get_their_own_offsets() -> None:
    text = "The drug helped. The drug helped."

    spans = split_sentences(text)

    assert [(span.start, span.end) for span in spans] == [(0, 16), (17, 33)]


def test_a_paragraph_break_ends_a_sentence() -> None:
    assert texts("First line\n\nSecond line.") == ["First line", "Second line."]


def test_a_trailing_citation_group_is_its_own_fragment() -> None:
    assert texts("It works (PUBMED:1). (PUBMED:2) Then it fails.") == [
        "It works (PUBMED:1).",
        "(PUBMED:2)",
        "Then it fails.",
    ]


@pytest.mark.parametrize("text", ["", "   ", "\n\n\t"])
def test_empty_or_blank_text_has_no_sentences(text: str) -> None:
    assert split_sentences(text) == []


def test_a_single_sentence_without_final_punctuation_is_kept() -> None:
    assert split_sentences("No final stop") == [Span("No final stop", 0, 13)]
