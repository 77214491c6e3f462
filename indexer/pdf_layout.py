"""From positioned text lines to an article: reading order, page furniture removed, paragraphs, sections.

Pure geometry and text on what indexer.pdf_worker measured; no PDF library here. Coordinates are PDF points with
the origin at the bottom left, so a larger y is higher on the page.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise

from indexer.full_text import Paragraph

# Running headers and footers sit in the top and bottom eighth of a page (A4: 105 pt, margins are 50-90 pt).
FURNITURE_BAND = 0.125
_PAGE_NUMBER = re.compile(r"^(page\s*)?(\d{1,4}|[ivxlc]{1,7})(\s*(of|/)\s*\d{1,4})?$", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
_NUMBERING = r"(?:\d+(?:\.\d+)*\.?|[IVX]+\.|[A-H]\.)?\s*"
_NAMED_HEADING = re.compile(
    _NUMBERING + r"(abstract|summary|background|introduction|objectives?|aims?|(materials|patients|subjects)"
    r" and methods|methods?|methodology|study design|results?|results and discussion|findings|discussion|"
    r"conclusions?|limitations|acknowledge?ments?|funding|conflicts? of interest|declarations?|"
    r"author contributions|appendix|supplementary (material|information)|references|bibliography|"
    r"literature cited|works cited)\s*:?",
    re.IGNORECASE,
)
REFERENCES_HEADING = re.compile(
    _NUMBERING + r"(references|bibliography|literature cited|works cited)\s*:?", re.IGNORECASE
)
_CAPTION = re.compile(r"^(table|fig\.?|figure)\s*\d", re.IGNORECASE)


@dataclass(frozen=True)
class Line:
    page: int  # 1-based
    x0: float
    y0: float
    x1: float
    y1: float
    size: float
    bold: bool
    text: str


@dataclass(frozen=True)
class Page:
    number: int
    width: float
    height: float
    lines: tuple[Line, ...]
    ocr: tuple[str, ...] | None = None  # paragraphs OCR read where the page had no text layer; None: not tried


@dataclass(frozen=True)
class Placed:
    """A line in reading order with the edges of the column it sits in (for indents and short last lines)."""

    line: Line
    column: tuple[int, int]  # (page, 0 = whole width or left column, 1 = right column, 2 = across both)
    left: float
    right: float


@dataclass(frozen=True)
class Layout:
    title_lines: tuple[Line, ...]
    paragraphs: tuple[Paragraph, ...]  # references dropped
    first_lines: tuple[Line, ...]  # everything before the references, page furniture included: where ids are


def without_furniture(pages: list[Page]) -> list[Page]:
    """Pages less their running headers, footers and bare page numbers: lines in the top or bottom band that recur on
    two or more pages (digits ignored, so "Page 3" and "Page 4" recur) or are a page number on their own."""
    keys: Counter[str] = Counter()
    for page in pages:
        keys.update({_furniture_key(line) for line in page.lines if _in_band(line, page)})
    kept = []
    for page in pages:
        lines = tuple(
            line
            for line in page.lines
            if not (_in_band(line, page) and (keys[_furniture_key(line)] >= 2 or _PAGE_NUMBER.match(line.text)))
        )
        kept.append(Page(page.number, page.width, page.height, lines, page.ocr))
    return kept


def _in_band(line: Line, page: Page) -> bool:
    return line.y0 >= page.height * (1 - FURNITURE_BAND) or line.y1 <= page.height * FURNITURE_BAND


def _furniture_key(line: Line) -> str:
    return _DIGITS.sub("#", " ".join(line.text.lower().split()))


def reading_order(page: Page) -> list[Placed]:
    """One column: rows top to bottom. Two columns (enough full lines on both sides of the middle): the page is cut
    into bands by the lines that cross the middle (title block, wide figure captions), and each band is read left
    column first, then right. The order the producer wrote the text in is not trusted."""
    middle, wide = page.width / 2, page.width / 4
    left = [line for line in page.lines if line.x1 <= middle + 1]
    right = [line for line in page.lines if line.x0 >= middle - 1 and line not in left]
    spanning = [line for line in page.lines if line not in left and line not in right]
    full_left = sum(line.x1 - line.x0 >= wide for line in left)
    full_right = sum(line.x1 - line.x0 >= wide for line in right)
    if min(full_left, full_right) < 5 or len(_rows(spanning)) >= full_right:
        return _placed(_rows(list(page.lines)), (page.number, 0))
    spanning_rows = _rows(spanning)
    cuts = [(row.y0 + row.y1) / 2 for row in spanning_rows]

    def band(line: Line) -> int:
        return sum(cut > (line.y0 + line.y1) / 2 for cut in cuts)

    ordered: list[Placed] = []
    for index in range(len(cuts) + 1):
        ordered += _placed(_rows([line for line in left if band(line) == index]), (page.number, 0))
        ordered += _placed(_rows([line for line in right if band(line) == index]), (page.number, 1))
        ordered += _placed([row for row in spanning_rows if band(row) == index], (page.number, 2))
    return ordered


def _rows(lines: list[Line]) -> list[Line]:
    """Top to bottom; fragments on one baseline (table cells, a line the producer wrote in pieces) joined left to
    right into one line."""
    rows: list[list[Line]] = []
    for line in sorted(lines, key=lambda line: (-line.y0, line.x0)):
        if rows and abs(rows[-1][0].y0 - line.y0) < 0.5 * min(line.size, rows[-1][0].size):
            rows[-1].append(line)
        else:
            rows.append([line])
    joined = []
    for row in rows:
        row.sort(key=lambda line: line.x0)
        first = row[0]
        text = " ".join(line.text for line in row)
        x1, y1 = max(line.x1 for line in row), max(line.y1 for line in row)
        joined.append(Line(first.page, first.x0, first.y0, x1, y1, first.size, first.bold, text))
    return joined


def _placed(lines: list[Line], column: tuple[int, int]) -> list[Placed]:
    if not lines:
        return []
    left, right = min(line.x0 for line in lines), max(line.x1 for line in lines)
    return [Placed(line, column, left, right) for line in lines]


def body_size(lines: Iterable[Line]) -> float:
    sizes: Counter[float] = Counter()
    for line in lines:
        sizes[round(line.size, 1)] += len(line.text)
    return sizes.most_common(1)[0][0] if sizes else 10.0


def heading_style(line: Line, body: float, body_bold: bool) -> tuple[float, bool] | None:
    """The (size, bold) that makes a line a heading, or None: larger than the body text, or bold where the body is
    not, short and not a sentence or a caption; or a usual section name on its own."""
    text = line.text.strip()
    if _NAMED_HEADING.fullmatch(text):
        return (round(max(line.size, body), 1), line.bold)
    words = len(text.split())
    if words > 15 or text.endswith((".", ",", ";")) or _CAPTION.match(text) or not any(c.isalpha() for c in text):
        return None
    if line.size >= body + 0.8 or (line.bold and not body_bold and line.size >= body - 0.2):
        return (round(line.size, 1), line.bold)
    return None


def join_lines(text: str, line: str) -> str:
    """Append a line to a paragraph, undoing a hyphen that only split a word at the line end."""
    if not text:
        return line
    if text.endswith("-") and len(text) > 1 and text[-2].isalpha() and line[:1].islower():
        return text[:-1] + line
    if text.endswith("-") and len(text) > 1 and text[-2].isalnum():
        return text + line  # "COVID-" + "19": a real hyphen
    return f"{text} {line}"


def median_pitch(placed: list[Placed], body: float) -> float:
    pitches = [
        first.line.y0 - second.line.y0
        for first, second in pairwise(placed)
        if first.column == second.column and abs(first.line.size - body) < 0.3 and first.line.y0 > second.line.y0
    ]
    return statistics.median(pitches) if pitches else body * 1.2


def new_paragraph(previous: Placed, current: Placed, pitch: float) -> bool:
    before, line = previous.line, current.line
    size = line.size
    if abs(before.size - size) > 0.5:
        return True
    short = before.x1 < previous.right - 3 * size and before.text.rstrip().endswith((".", "!", "?", ":"))
    if previous.column != current.column:
        return short
    indented = current.left + 0.8 * size < line.x0 < current.left + 5 * size and before.x0 < current.left + 0.8 * size
    return short or indented or before.y0 - line.y0 > 1.3 * pitch
