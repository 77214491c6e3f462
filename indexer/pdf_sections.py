"""Lines in reading order become an article: title, abstract, sectioned paragraphs, DOI and PMID.

Headings are told by their font (larger than the body, or bold where the body is not); their levels by rank of
(size, bold), largest first. A usual section name on a line of its own ("Methods", "2. Results") is a heading in any
font, for papers that set headings in body type. The reference list is dropped, as the JATS reader drops it: a cited
paper's title is not evidence of what this paper found.
"""

from __future__ import annotations

import re

from indexer.full_text import Paragraph
from indexer.pdf_layout import (
    REFERENCES_HEADING,
    Layout,
    Line,
    Page,
    Placed,
    body_size,
    heading_style,
    join_lines,
    median_pitch,
    new_paragraph,
    reading_order,
)

_DOI = re.compile(r"\b(10\.\d{4,9}/\S+)")
_PMID = re.compile(r"\bPMID\s*:?\s*(\d{1,8})\b")
# Producers fill the Title entry with these when the author did not.
_JUNK_TITLE = re.compile(r"^(untitled|microsoft (word|powerpoint) - .*|.*\.(docx?|tex|pdf|dvi|indd))$", re.IGNORECASE)


def layout(pages: list[Page]) -> Layout:
    placed = [item for page in pages for item in reading_order(page)]
    body = body_size(item.line for item in placed)
    body_bold = _mostly_bold(placed, body)
    title_lines = _title_lines(placed, body)
    placed = [item for item in placed if item.line not in title_lines]
    styles = sorted({style for item in placed if (style := heading_style(item.line, body, body_bold))}, reverse=True)
    pitch = median_pitch(placed, body)
    ocr_pages = {page.number: page.ocr for page in pages if page.ocr}

    paragraphs: list[Paragraph] = []
    first_lines: list[Line] = []
    sections: list[tuple[int, str]] = []  # (level, title) outermost first
    skipping_level: int | None = None  # inside the references, at this heading level
    text, page, previous = "", 0, None

    def flush() -> None:
        nonlocal text
        if text and skipping_level is None:
            paragraphs.append(Paragraph(section=" > ".join(title for _, title in sections), text=text, page=page))
        text = ""

    done_ocr: set[int] = set()
    for item in placed:
        for number in sorted(set(ocr_pages) - done_ocr):
            if number < item.line.page:
                flush()
                paragraphs.extend(_ocr_paragraphs(ocr_pages[number], sections, number, skipping_level))
                done_ocr.add(number)
        style = heading_style(item.line, body, body_bold)
        if style is not None and not (previous and _continues_heading(previous, item, style, body, body_bold)):
            flush()
            level = styles.index(style) + 1
            if skipping_level is not None and level <= skipping_level:
                skipping_level = None
            if REFERENCES_HEADING.fullmatch(item.line.text.strip()):
                skipping_level = level
            sections = [*[section for section in sections if section[0] < level], (level, item.line.text.strip())]
        elif style is not None:
            sections[-1] = (sections[-1][0], f"{sections[-1][1]} {item.line.text.strip()}")
        elif previous is None or text == "" or new_paragraph(previous, item, pitch):
            flush()
            text, page = item.line.text, item.line.page
        else:
            text = join_lines(text, item.line.text)
        if skipping_level is None:
            first_lines.append(item.line)
        previous = item
    flush()
    for number in sorted(set(ocr_pages) - done_ocr):
        paragraphs.extend(_ocr_paragraphs(ocr_pages[number], sections, number, skipping_level))
    return Layout(title_lines=tuple(title_lines), paragraphs=tuple(paragraphs), first_lines=tuple(first_lines))


def _continues_heading(previous: Placed, item: Placed, style: tuple[float, bool], body: float, bold: bool) -> bool:
    """A heading wrapped onto a second line: same style, right below, same column."""
    return (
        heading_style(previous.line, body, bold) == style
        and previous.column == item.column
        and 0 < previous.line.y0 - item.line.y0 < 1.6 * item.line.size
    )


def _mostly_bold(placed: list[Placed], body: float) -> bool:
    at_body = [item.line for item in placed if abs(item.line.size - body) < 0.3]
    return sum(len(line.text) for line in at_body if line.bold) > sum(len(line.text) for line in at_body) / 2


def _title_lines(placed: list[Placed], body: float) -> list[Line]:
    """The run of largest-font lines on the first page, where that font is clearly larger than the body's."""
    first_page = [item.line for item in placed if item.line.page == placed[0].line.page] if placed else []
    if not first_page:
        return []
    largest = max(line.size for line in first_page)
    if largest < body + 1.5:
        return []
    start = next(index for index, line in enumerate(first_page) if line.size == largest)
    run = []
    for line in first_page[start:]:
        if line.size != largest:
            break
        run.append(line)
    return run


def _ocr_paragraphs(
    blocks: tuple[str, ...], sections: list[tuple[int, str]], page: int, skipping: int | None
) -> list[Paragraph]:
    if skipping is not None:
        return []
    section = " > ".join(title for _, title in sections)
    paragraphs = []
    for block in blocks:
        text = ""
        for line in block.splitlines():
            text = join_lines(text, line.strip()) if line.strip() else text
        if text:
            paragraphs.append(Paragraph(section=section, text=text, page=page, ocr=True))
    return paragraphs


def title_of(metadata: dict[str, str], title_lines: tuple[Line, ...]) -> str:
    from_metadata = " ".join(metadata.get("Title", "").split())
    if from_metadata and not _JUNK_TITLE.match(from_metadata) and len(from_metadata.split()) >= 2:
        return from_metadata
    text = ""
    for line in title_lines:
        text = join_lines(text, line.text)
    return text


def identifiers(metadata: dict[str, str], lines: tuple[Line, ...]) -> tuple[str | None, str | None]:
    """The first DOI and labelled PMID in the metadata or the text before the references (cited papers' DOIs are in
    the references, so they are never taken for this paper's)."""
    texts = [metadata.get(key, "") for key in ("Subject", "Keywords", "Title")] + [line.text for line in lines]
    doi = pmid = None
    for text in texts:
        if doi is None and (found := _DOI.search(text)):
            doi = found.group(1).rstrip(".,;:)]}>'\"")
        if pmid is None and (found := _PMID.search(text)):
            pmid = found.group(1)
    return doi, pmid
