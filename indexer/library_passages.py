"""An uploaded paper cut into passages: the pieces search returns and answers cite, each in one section, with its page.

A passage never spans two sections (a Methods sentence read as a Result would mislead the verifier) and holds whole
sentences up to a word budget, so that a cited passage is short enough to judge and a long paragraph is not one
unwieldy hit. It carries the page it starts on: the citation `DOC:<id>:p<page>` and the viewer open at that page.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import groupby

from indexer.chunking import split_for_chunks
from indexer.full_text import FullText, Paragraph
from indexer.passages import packed_runs

# About a third of a two-column page: the size of the PubMed abstracts the models were trained on (~200 words), a
# little less so that a passage and its neighbours still fit the verifier's window.
PASSAGE_WORDS = 160


@dataclass(frozen=True)
class Passage:
    ordinal: int  # 0-based, in reading order across the document
    section: str
    page: int | None  # None for a format without pages (JATS)
    text: str
    ocr: bool = False  # some of it was read by OCR from a scanned page


def passages_of(article: FullText, *, max_words: int = PASSAGE_WORDS) -> list[Passage]:
    """The abstract (as its own section), then the body's paragraphs, packed into passages section by section."""
    paragraphs: list[Paragraph] = []
    if article.abstract and not _body_opens_with_abstract(article):
        first_page = 1 if article.pages else None
        paragraphs.append(Paragraph(section="Abstract", text=article.abstract, page=first_page))
    paragraphs += _without_front_matter(article)
    texts = (
        (section, piece)
        for section, run in groupby(paragraphs, key=lambda paragraph: paragraph.section)
        for piece in _packed(run, max_words=max_words)
    )
    return [
        Passage(ordinal=ordinal, section=section, page=page, text=text, ocr=ocr)
        for ordinal, (section, (page, text, ocr)) in enumerate(texts)
    ]


def _without_front_matter(article: FullText) -> tuple[Paragraph, ...]:
    """A PDF's paragraphs without the lines above its first heading (authors, affiliations, "doi: ... PMID: ..."),
    whose identifiers the reader has already taken: they are not findings, and as a passage they would be a search
    hit about nothing. A PDF with no headings at all keeps everything; JATS marks its front matter itself."""
    paragraphs = article.paragraphs
    if article.pages is None:
        return paragraphs
    first_heading = next((index for index, paragraph in enumerate(paragraphs) if paragraph.section), None)
    return paragraphs if first_heading is None else paragraphs[first_heading:]


def _body_opens_with_abstract(article: FullText) -> bool:
    """A PDF's reader finds the abstract as the first section of the body; adding it again would index it twice."""
    return bool(article.paragraphs) and article.paragraphs[0].section.split(" > ")[0].lower() == "abstract"


def _packed(paragraphs: Iterable[Paragraph], *, max_words: int) -> Iterator[tuple[int | None, str, bool]]:
    """Sentences of consecutive paragraphs of one section packed while they fit `max_words`; a longer sentence stands
    alone, whole. Each passage carries the page of its first sentence, and whether any of it was read by OCR."""
    sentences = [
        (sentence, paragraph)
        for paragraph in paragraphs
        for sentence in split_for_chunks(" ".join(paragraph.text.split()))
    ]
    for run in packed_runs([len(sentence.split()) for sentence, _ in sentences], max_words=max_words):
        packed = [sentences[index] for index in run]
        yield packed[0][1].page, " ".join(sentence for sentence, _ in packed), any(p.ocr for _, p in packed)
