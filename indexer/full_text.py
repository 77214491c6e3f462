"""What a full-text reader (JATS, PDF) gives back: an article's identifiers and its paragraphs in reading order."""

from __future__ import annotations

from dataclasses import dataclass


class FullTextError(ValueError):
    """A file that cannot be read as an article; the message says why, for the uploader."""


@dataclass(frozen=True)
class Paragraph:
    section: str  # the titles of the sections it sits in, outermost first, joined by " > "; "" before any section
    text: str
    page: int | None = None  # 1-based page it starts on; None where the format has no pages (JATS)
    ocr: bool = False  # read by OCR from a scanned page (no text layer): it may hold misread words


@dataclass(frozen=True)
class FullText:
    title: str
    abstract: str
    doi: str | None
    pmid: str | None
    pmcid: str | None
    paragraphs: tuple[Paragraph, ...]
    pages: int | None = None  # the page count of a paged format (PDF); None for JATS
