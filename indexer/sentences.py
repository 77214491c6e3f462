"""Sentence splitting with character offsets, robust to biomedical abbreviations ("et al.", "vs.", decimals)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import pysbd


@dataclass(frozen=True)
class Span:
    text: str
    start: int  # offsets into the original text, so the page can highlight exactly this sentence
    end: int


@cache
def _segmenter() -> pysbd.Segmenter:
    return pysbd.Segmenter(language="en", clean=False, char_span=True)


def split_sentences(text: str) -> list[Span]:
    spans: list[Span] = []
    for piece in _segmenter().segment(text):
        stripped = piece.sent.strip()
        if not stripped:
            continue
        start = piece.start + (len(piece.sent) - len(piece.sent.lstrip()))
        spans.append(Span(text=stripped, start=start, end=start + len(stripped)))
    return spans


def sentence_texts(text: str) -> list[str]:
    """The sentences of `text` without their offsets."""
    return [span.text for span in split_sentences(text)]
