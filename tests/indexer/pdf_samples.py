"""Scientific-paper-like PDFs typeset at run time with reportlab from real PubMed text, with their ground truth.

Shared by tests/indexer/test_pdf_text.py and benchmarks/pdf_parsing.py. Lines are broken and placed here, not by
reportlab's flowables, so that the ground truth is exact: which words were drawn, in which reading order, which
lines are running headers / footers, which word was hyphenated at a line end, and in what order the text was
written into the content stream (a producer may write it in an order unlike the reading order).

Hostile files (bombs, truncated, encrypted, scanned) are built here too; a few are written as raw PDF syntax because
no well-behaved producer would write them.
"""

from __future__ import annotations

import io
import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from reportlab.lib.pagesizes import A4
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas

BODY_FONT, BOLD_FONT = "Helvetica", "Helvetica-Bold"
MARGIN, TOP_BAND, BOTTOM_BAND = 56.0, 40.0, 40.0
GUTTER = 20.0


@dataclass(frozen=True)
class Block:
    kind: str  # title | authors | heading | subheading | paragraph | table | reference | meta
    text: str = ""
    rows: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class Layout:
    name: str
    columns: int = 1
    running_header: str | None = None
    page_numbers: bool = True
    body_size: float = 10.0
    # "reading": header, body in reading order, footer. "scrambled": footer and header first, then each row of
    # body lines across both columns, as some producers write a page (positioned text, not a text flow).
    stream_order: str = "reading"
    hyphenate: bool = True
    title_metadata: bool = True


@dataclass(frozen=True)
class Segment:
    kind: str  # as Block.kind, plus "header" / "footer" for page furniture
    text: str
    page: int
    hyphen: bool = False  # the line ends in a hyphen set only to split a word


@dataclass
class Typeset:
    pdf: bytes
    pages: int
    segments: list[Segment] = field(default_factory=list)  # every drawn line's text, in reading order
    hyphenated: list[str] = field(default_factory=list)  # words split at a line end, as written whole

    def text_of(self, *kinds: str) -> str:
        """The text of those kinds in reading order, words split at line ends made whole again."""
        text = ""
        for segment in self.segments:
            if segment.kind in kinds:
                text += segment.text[:-1] if segment.hyphen else f"{segment.text} "
        return text.strip()


@dataclass
class _Line:
    page: int
    column: int
    x: float
    y: float
    font: str
    size: float
    text: str
    kind: str
    cells: tuple[tuple[float, str], ...] = ()  # x and text of each table cell, left to right
    hyphen: bool = False


def pqal_records(data_dir: Path) -> list[tuple[str, dict[str, object]]]:
    pqal = json.loads((data_dir / "pubmedqa" / "ori_pqal.json").read_text())
    return [(pmid, dict(record)) for pmid, record in pqal.items()]


def pubmed_citations(data_dir: Path) -> list[dict[str, object]]:
    citations = json.loads((data_dir / "pubmed" / "inlpt" / "pubmed_data.json").read_text())
    return [dict(citation) for citation in citations if citation.get("Title") and citation.get("Authors")]


def paper_blocks(
    records: list[tuple[str, dict[str, object]]],
    citations: list[dict[str, object]],
    *,
    references: int = 6,
    table: bool = True,
) -> list[Block]:
    """A paper made of real text: the first record's question as title, its long answer as abstract, the labelled
    contexts of every record as sections (Background, Methods, Results...), a table of the records, a reference list
    of real PubMed citations."""
    pmid, first = records[0]
    blocks = [
        Block("title", str(first["QUESTION"])),
        Block("authors", "; ".join(str(citations[0]["Authors"]).split("; ")[:4])),
        Block("meta", f"doi: 10.5555/verimed.{pmid} PMID: {pmid}"),
        Block("heading", "Abstract"),
        Block("paragraph", str(first["LONG_ANSWER"])),
    ]
    by_label: dict[str, list[str]] = {}
    for _, record in records:
        labels = [str(label).title() for label in record["LABELS"]]  # type: ignore[attr-defined]
        for label, context in zip(labels, record["CONTEXTS"], strict=True):  # type: ignore[call-overload]
            by_label.setdefault(label, []).append(str(context))
    for label, contexts in by_label.items():
        blocks.append(Block("heading", label))
        blocks += [Block("paragraph", context) for context in contexts]
    if table:
        rows = [("PMID", "Year", "Answer")] + [
            (pmid, str(record.get("YEAR") or ""), str(record["final_decision"])) for pmid, record in records
        ]
        blocks.append(Block("table", "Table 1. The studies and their answers.", rows=tuple(rows)))
    blocks.append(Block("heading", "References"))
    for number, citation in enumerate(citations[1 : 1 + references], 1):
        authors = ", ".join(str(citation["Authors"]).split("; ")[:3])
        year = str(citation.get("Publication Date") or "")[:4]
        doi = f" doi:{citation['DOI']}" if citation.get("DOI") else ""
        blocks.append(Block("reference", f"{number}. {authors}. {citation['Title']} {year}.{doi}"))
    return blocks


def typeset(blocks: list[Block], layout: Layout, *, title: str | None = None) -> Typeset:
    width, height = A4
    body_width = width - 2 * MARGIN
    column_width = (body_width - GUTTER * (layout.columns - 1)) / layout.columns
    lines: list[_Line] = []
    hyphenated: list[str] = []
    page, column, y = 1, 0, height - MARGIN - TOP_BAND
    leading = layout.body_size * 1.25

    def column_x(index: int) -> float:
        return float(MARGIN + index * (column_width + GUTTER))

    def advance(needed: float) -> None:
        nonlocal page, column, y
        if y - needed >= MARGIN + BOTTOM_BAND:
            return
        column += 1
        if column == layout.columns:
            page, column = page + 1, 0
        y = spanning_bottom if (page == 1 and column > 0) else height - MARGIN - TOP_BAND

    spanning_bottom = y
    for block in blocks:
        spans = block.kind in ("title", "authors", "meta") or layout.columns == 1
        line_width = body_width if spans else column_width
        if block.kind in ("title", "authors", "meta"):
            font = BOLD_FONT if block.kind == "title" else BODY_FONT
            size = 16.0 if block.kind == "title" else layout.body_size
            for text in _wrap(block.text, font, size, line_width, hyphenate=False, hyphenated=hyphenated):
                y -= size * 1.3
                lines.append(_Line(page, -1, MARGIN, y, font, size, text, block.kind))
            y -= 6
            spanning_bottom = y
            continue
        if block.kind in ("heading", "subheading"):
            size = layout.body_size + (2 if block.kind == "heading" else 0.5)
            advance(size * 1.3 + 3 * leading)  # a heading is not left alone at a column's foot
            y -= size * 0.8
            y -= size * 1.3
            lines.append(_Line(page, column, column_x(column), y, BOLD_FONT, size, block.text, block.kind))
            continue
        if block.kind == "table":
            advance(leading * (len(block.rows) + 2))
            y -= leading * 1.5
            lines.append(_Line(page, column, column_x(column), y, BOLD_FONT, layout.body_size - 1, block.text, "table"))
            cell_width = line_width / len(block.rows[0])
            for row in block.rows:
                y -= leading
                x = column_x(column)
                cells = tuple((x + index * cell_width, cell) for index, cell in enumerate(row))
                lines.append(
                    _Line(page, column, x, y, BODY_FONT, layout.body_size - 1, " ".join(row), "table", cells=cells)
                )
            y -= leading * 0.5
            continue
        size = layout.body_size - (1 if block.kind == "reference" else 0)
        wrapped = _wrap(block.text, BODY_FONT, size, line_width, hyphenate=layout.hyphenate, hyphenated=hyphenated)
        y -= leading * 0.4
        for text in wrapped:
            advance(leading)
            y -= leading
            hyphen = text.endswith("-") and text[:-1].split()[-1] + text[-1:] not in block.text.split()
            lines.append(_Line(page, column, column_x(column), y, BODY_FONT, size, text, block.kind, hyphen=hyphen))
    pages = page
    return _draw(lines, layout, pages, hyphenated, title=title)


def _wrap(text: str, font: str, size: float, width: float, *, hyphenate: bool, hyphenated: list[str]) -> list[str]:
    lines: list[str] = []
    current = ""
    for word in text.split():
        candidate = f"{current} {word}" if current else word
        if stringWidth(candidate, font, size) <= width:
            current = candidate
            continue
        if hyphenate and len(word) >= 9 and word.isalpha():
            # The longest head (at least 4 letters, leaving at least 4) that still fits with its hyphen.
            for cut in range(len(word) - 4, 3, -1):
                head = f"{current} {word[:cut]}-" if current else f"{word[:cut]}-"
                if stringWidth(head, font, size) <= width:
                    lines.append(head)
                    hyphenated.append(word)
                    current = word[cut:]
                    break
            else:
                lines.append(current)
                current = word
            continue
        if current:
            lines.append(current)
        current = word
    if current:
        lines.append(current)
    return lines


def _draw(lines: list[_Line], layout: Layout, pages: int, hyphenated: list[str], *, title: str | None) -> Typeset:
    width, height = A4
    buffer = io.BytesIO()
    canvas = Canvas(buffer, pagesize=A4, invariant=True)
    title_line = " ".join(line.text for line in lines if line.kind == "title")
    if layout.title_metadata:
        canvas.setTitle(title if title is not None else title_line)
    segments: list[Segment] = []
    for page in range(1, pages + 1):
        furniture: list[_Line] = []
        if layout.running_header:
            furniture.append(
                _Line(page, -1, MARGIN, height - MARGIN, BODY_FONT, 8, layout.running_header, "header"),
            )
        if layout.page_numbers:
            furniture.append(_Line(page, -1, width / 2 - 4, MARGIN - 10, BODY_FONT, 8, str(page), "footer"))
        body = [line for line in lines if line.page == page]
        if layout.stream_order == "scrambled":
            drawn = furniture[::-1] + sorted(body, key=lambda line: (-round(line.y, 1), line.x))
        else:
            drawn = furniture[:1] + body + furniture[1:] if layout.running_header else body + furniture
        for line in drawn:
            canvas.setFont(line.font, line.size)
            if line.cells:
                for x, cell in line.cells:
                    canvas.drawString(x, line.y, cell)
            else:
                canvas.drawString(line.x, line.y, line.text)
        # Reading order: spanning lines first (they sit above the columns), then column by column.
        ordered = sorted(furniture, key=lambda line: line.kind != "header")
        ordered = [ordered[0]] if ordered and ordered[0].kind == "header" else []
        ordered += sorted(body, key=lambda line: (line.column >= 0, line.column, -line.y))
        ordered += [line for line in furniture if line.kind == "footer"]
        segments += [Segment(line.kind, line.text, page, line.hyphen) for line in ordered]
        canvas.showPage()
    canvas.save()
    return Typeset(pdf=buffer.getvalue(), pages=pages, segments=segments, hyphenated=hyphenated)


def raw_pdf(content: bytes, *, filters: str | None = "/FlateDecode", extra_objects: tuple[bytes, ...] = ()) -> bytes:
    """A one-page PDF written by hand around one content stream (already encoded for `filters`), with Helvetica as
    /F1 and any `extra_objects` numbered from 5 on (an image XObject is /Im1 = object 5)."""
    image = b"/XObject << /Im1 5 0 R >>" if extra_objects else b""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> %s >> "
        b"/Contents 4 0 R >>" % (5 + len(extra_objects), image),
        b"<< /Length %d %s >>\nstream\n" % (len(content), b"/Filter " + filters.encode() if filters else b"")
        + content
        + b"\nendstream",
        *extra_objects,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return out


def flate_bomb(text: str, *, megabytes: int) -> bytes:
    """A page whose content stream shows `text` and then inflates to `megabytes` MiB of blanks: under 1 MB on disk."""
    compressor = zlib.compressobj(9)
    head = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET\n".encode()
    parts = [compressor.compress(head)]
    blank = b" " * (1 << 20)
    parts += [compressor.compress(blank) for _ in range(megabytes)]
    parts.append(compressor.flush())
    return raw_pdf(b"".join(parts))


def scanned_page(gray: bytes, width: int, height: int, *, dpi: float = 200.0) -> bytes:
    """A page holding one 8-bit greyscale image and no text: what a scanner writes."""
    points_w, points_h = width * 72 / dpi, height * 72 / dpi
    content = zlib.compress(b"q %.2f 0 0 %.2f 36 %.2f cm /Im1 Do Q" % (points_w, points_h, 792 - 36 - points_h))
    pixels = zlib.compress(gray)
    image = (
        b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 "
        b"/Filter /FlateDecode /Length %d >>\nstream\n" % (width, height, len(pixels)) + pixels + b"\nendstream"
    )
    return raw_pdf(content, extra_objects=(image,))


def encrypted(pdf_blocks: list[Block], *, user_password: str) -> bytes:
    """A paper that needs `user_password` to open (RC4 128-bit, reportlab's standard encryption)."""
    from reportlab.lib.pdfencrypt import StandardEncryption

    buffer = io.BytesIO()
    canvas = Canvas(buffer, pagesize=A4, encrypt=StandardEncryption(user_password, ownerPassword="owner"))
    canvas.setFont(BODY_FONT, 10)
    y = A4[1] - MARGIN
    for block in pdf_blocks[:6]:
        for text in _wrap(block.text, BODY_FONT, 10, A4[0] - 2 * MARGIN, hyphenate=False, hyphenated=[]):
            y -= 13
            canvas.drawString(MARGIN, y, text)
    canvas.showPage()
    canvas.save()
    return buffer.getvalue()


def library_papers(data_dir: Path, count: int, *, per_paper: int = 6, first: int = 0) -> list[tuple[str, Typeset]]:
    """Distinct papers for a library, each from its own `per_paper` PQA-L records (from paper number `first` on):
    every other one two-column under a running header, as journals set them; (file name, typeset paper)."""
    records, citations = pqal_records(data_dir), pubmed_citations(data_dir)
    built = []
    for index in range(first, first + count):
        if index % 2 == 0:
            layout = Layout("two-column", columns=2, running_header=f"J Test Med 2026;{index + 1}:1-9", body_size=9.0)
        else:
            layout = Layout("one-column", columns=1, body_size=10.5)
        blocks = paper_blocks(records[index * per_paper : (index + 1) * per_paper], citations[index * 8 :])
        built.append((f"paper-{index + 1:02d}.pdf", typeset(blocks, layout)))
    return built


def scanned_text_page(text: str) -> bytes:
    """`text` typeset, then rendered to greyscale pixels and stored as a page holding only that image: a scan of real
    text, with no text layer."""
    import pypdfium2

    page = typeset([Block("paragraph", text)], Layout("scan", page_numbers=False, body_size=12, hyphenate=False))
    bitmap = pypdfium2.PdfDocument(page.pdf)[0].render(scale=200 / 72, grayscale=True, crop=(0, 560, 0, 0))
    rows = bytes(bitmap.buffer)
    gray = b"".join(rows[row * bitmap.stride : row * bitmap.stride + bitmap.width] for row in range(bitmap.height))
    return scanned_page(gray, bitmap.width, bitmap.height)
